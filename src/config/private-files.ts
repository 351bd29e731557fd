import { randomBytes } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { writeAtomically } from "./atomic-file.ts";
import { ownValue } from "../safety/keys.ts";

const EXTENSIONS: Readonly<Record<string, string>> = {
  "audio/wav": ".wav",
  "audio/mpeg": ".mp3",
  "audio/ogg": ".ogg",
  "image/png": ".png",
  "image/jpeg": ".jpg",
  "image/gif": ".gif",
  "image/webp": ".webp",
  "image/svg+xml": ".svg",
  "image/bmp": ".bmp",
  "image/tiff": ".tiff",
  "application/pdf": ".pdf",
  "application/json": ".json",
  "text/plain": ".txt",
};

export function extensionFor(mimeType: string | undefined): string {
  return (mimeType && ownValue(EXTENSIONS, mimeType)) ?? ".bin";
}

/**
 * Writes a file only the user can read (0600) in a folder only the user can
 * enter (0700). Names are made unique and safe whatever a server sent. The
 * file appears whole or not at all (a full disk leaves nothing behind).
 */
export async function writePrivateFile(root: string, kind: string, name: string, bytes: Uint8Array): Promise<string> {
  const folder = join(root, kind);
  await mkdir(folder, { recursive: true, mode: 0o700 });
  const safe = name.replace(/[^A-Za-z0-9._-]/g, "_").slice(-80);
  const path = join(folder, `${Date.now()}-${randomBytes(3).toString("hex")}-${safe}`);
  await writeAtomically(path, bytes, 0o600);
  return path;
}
