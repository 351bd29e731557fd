import { readFile } from "node:fs/promises";
import { PiMcpError, describeError } from "../kernel/errors.ts";
import { withFileLock } from "./atomic-file.ts";
import { describeJsonType } from "./field-text.ts";
import type { ConfigIssue } from "../kernel/settings.ts";
import { isRecord } from "../safety/keys.ts";
import { parsedFile, unreadable, type JsonFile } from "./settings-read.ts";

export type { JsonFile };

/** Reads a JSON settings file without ever throwing for its content. */
export async function readJsonFile(path: string): Promise<JsonFile> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    return unreadable(error);
  }
  return parsedFile(text);
}

export function fileIssue(path: string, problem: string): ConfigIssue {
  return { path: "mcp", message: `${path} ${problem}; MCP is disabled until it is fixed`, file: path };
}

/**
 * Changes one settings file under Pi's own lock (`<file>.lock`, as Pi's
 * SettingsManager takes it) and replaces it atomically. `change` receives a
 * copy of the whole file's object and returns the new one. A file that is not
 * a JSON object is never overwritten. A symbolic link is written through: its
 * target gets the change (and is locked too), the link stays. `change` may
 * return the object it was given unchanged (the same reference): then nothing
 * is written.
 */
export async function updateSettings(path: string, change: (data: Record<string, unknown>) => Record<string, unknown>): Promise<void> {
  const lockFailed = (cause: unknown) =>
    new PiMcpError("lock_timeout", `${path} is locked by another writer; nothing was changed (${describeError(cause)})`, { cause });
  await withFileLock(path, { followLinks: true, lockFailed }, async (file) => {
    const current = await readJsonFile(file.target);
    if (current.problem) throw new PiMcpError("unreadable_settings", `${path} ${current.problem}; nothing was changed`);
    const data = structuredClone(current.data ?? {});
    const next = change(data);
    if (next === data && current.exists) return;
    await file.write(`${JSON.stringify(next, null, 2)}\n`);
  });
}

/**
 * Changes the `mcp` key of one settings file (see `updateSettings`). `change`
 * receives the current `mcp` value and returns the new one (`undefined`
 * removes the key); every other key of the file is kept as it was.
 */
export async function updateMcpSettings(
  path: string,
  change: (mcp: Record<string, unknown> | undefined) => Record<string, unknown> | undefined,
): Promise<void> {
  await updateSettings(path, (data) => {
    // Valid JSON of another shape is the person's data, not an empty `mcp`: it is never replaced.
    if (data.mcp !== undefined && !isRecord(data.mcp)) throw wrongShape(path, "mcp", data.mcp);
    const next = { ...data };
    const mcp = change(isRecord(data.mcp) ? data.mcp : undefined);
    if (mcp === undefined) delete next.mcp;
    else next.mcp = mcp;
    return next;
  });
}

/** A settings value of the wrong JSON type where a mutation must write: refused, with its path; nothing is changed. */
export function wrongShape(file: string, path: string, value: unknown): PiMcpError {
  return new PiMcpError("invalid_settings", `${file}: ${path}: must be an object (is ${describeJsonType(value)}); nothing was changed`);
}
