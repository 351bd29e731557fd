import { randomBytes } from "node:crypto";
import { mkdir, open, readFile, rename, rm, stat } from "node:fs/promises";
import { dirname, basename, join } from "node:path";
import lockfile from "proper-lockfile";
import { PiMcpError, describeError } from "../kernel/errors.ts";
import { isRecord } from "./schema.ts";
import type { ConfigIssue } from "./types.ts";

export interface JsonFile {
  readonly exists: boolean;
  /** The parsed top-level object, when the file exists and is a JSON object. */
  readonly data?: Record<string, unknown>;
  /** Why an existing file cannot be used. */
  readonly problem?: string;
}

/** Reads a JSON settings file without ever throwing for its content. */
export async function readJsonFile(path: string): Promise<JsonFile> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { exists: false };
    return { exists: true, problem: `cannot be read (${(error as NodeJS.ErrnoException).code ?? describeError(error)})` };
  }
  let data: unknown;
  try {
    data = JSON.parse(text.replace(/^\uFEFF/, ""));
  } catch {
    // The parser's message can quote file content, which may hold secrets: say only where.
    return { exists: true, problem: "is not valid JSON" };
  }
  if (!isRecord(data)) return { exists: true, problem: "must contain a JSON object" };
  return { exists: true, data };
}

export function fileIssue(path: string, problem: string): ConfigIssue {
  return { path: "mcp", message: `${path} ${problem}; MCP is disabled until it is fixed`, file: path };
}

/** How long a writer waits for another writer's lock before giving up. */
const LOCK_RETRIES = { retries: 40, factor: 1.3, minTimeout: 20, maxTimeout: 250 };
const STALE_LOCK_MS = 10_000;

/**
 * Changes one settings file under Pi's own lock (`<file>.lock`, as Pi's
 * SettingsManager takes it) and replaces it atomically. `change` receives the
 * current `mcp` value and returns the new one (`undefined` removes the key);
 * every other key of the file is kept as it was. A file that is not a JSON
 * object is never overwritten.
 */
export async function updateMcpSettings(
  path: string,
  change: (mcp: Record<string, unknown> | undefined) => Record<string, unknown> | undefined,
): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(path, { realpath: false, retries: LOCK_RETRIES, stale: STALE_LOCK_MS });
  } catch (error) {
    throw new PiMcpError("lock_timeout", `${path} is locked by another writer; nothing was changed (${describeError(error)})`, {
      cause: error,
    });
  }
  try {
    const current = await readJsonFile(path);
    if (current.problem) throw new PiMcpError("unreadable_settings", `${path} ${current.problem}; nothing was changed`);
    const data = { ...(current.data ?? {}) };
    const mcp = change(isRecord(data.mcp) ? structuredClone(data.mcp) : undefined);
    if (mcp === undefined) delete data.mcp;
    else data.mcp = mcp;
    await writeAtomically(path, `${JSON.stringify(data, null, 2)}\n`);
  } finally {
    await release();
  }
}

/** Writes a sibling temporary file, flushes it, then renames it over `path`. */
export async function writeAtomically(path: string, text: string, mode?: number): Promise<void> {
  const temporary = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  const keepMode = mode ?? (await stat(path).then((info) => info.mode & 0o777, () => 0o644));
  const handle = await open(temporary, "wx", keepMode);
  try {
    await handle.writeFile(text, "utf8");
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}
