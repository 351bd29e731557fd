/*
 * Reading settings files: one JSON parse of a whole file, its objects without
 * a prototype, and the `mcp` value of a settings file kept as text between
 * reads while the file does not change. Light on purpose (no validation, no
 * locks): the Pi entry computes the settings stamp with it while Pi loads.
 */
import { readFileSync, statSync, type BigIntStats } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { describeError } from "../kernel/errors.ts";
import { isRecord, parseJson } from "../safety/keys.ts";

export interface JsonFile {
  readonly exists: boolean;
  /** The parsed top-level object, when the file exists and is a JSON object. */
  readonly data?: Record<string, unknown>;
  /** Why an existing file cannot be used. */
  readonly problem?: string;
}

export function unreadable(error: unknown): JsonFile {
  if ((error as NodeJS.ErrnoException).code === "ENOENT") return { exists: false };
  return { exists: true, problem: `cannot be read (${(error as NodeJS.ErrnoException).code ?? describeError(error)})` };
}

export function parsedFile(text: string, parse: (text: string) => unknown = parseJson): JsonFile {
  let data: unknown;
  try {
    data = parse(text.replace(/^\uFEFF/, ""));
  } catch {
    // The parser's message can quote file content, which may hold secrets: say only where.
    return { exists: true, problem: "is not valid JSON" };
  }
  if (!isRecord(data)) return { exists: true, problem: "must contain a JSON object" };
  return { exists: true, data };
}

/** One settings file's `mcp` value as written: its JSON text (absent: undefined), or why the file cannot be used. */
export interface McpSettingsText {
  readonly exists: boolean;
  readonly problem?: string;
  readonly mcpJson?: string;
}

/**
 * The `mcp` value of a settings file, read with one parse each time the file
 * changes: a session start reads it several times (the settings stamp before
 * and after loading, the load itself) and the rest of the file, which may be
 * large, is never kept. A file is the same while its device, inode, size,
 * change and modification times (nanoseconds) are: every write changes one
 * (an atomic replacement, Pi's and ours, gives a new inode). The file is
 * looked at before it is read, so a change during the read is seen next time.
 */
const mcpTexts = new Map<string, { readonly identity: string; readonly value: McpSettingsText }>();

export function readMcpSettingsSync(path: string): McpSettingsText {
  let identity: string;
  try {
    identity = identityOf(statSync(path, { bigint: true }));
  } catch (error) {
    return unreadable(error);
  }
  const known = mcpTexts.get(path);
  if (known?.identity === identity) return known.value;
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    return unreadable(error);
  }
  return remember(path, identity, text);
}

export async function readMcpSettings(path: string): Promise<McpSettingsText> {
  let identity: string;
  try {
    identity = identityOf(await stat(path, { bigint: true }));
  } catch (error) {
    return unreadable(error);
  }
  const known = mcpTexts.get(path);
  if (known?.identity === identity) return known.value;
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    return unreadable(error);
  }
  return remember(path, identity, text);
}

function identityOf(info: BigIntStats): string {
  return `${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}`;
}

function remember(path: string, identity: string, text: string): McpSettingsText {
  // Only `mcp` is read, and kept as text: the whole file needs no prototype-free objects (parseJson's walk).
  const file = parsedFile(text, JSON.parse);
  const value: McpSettingsText = file.problem
    ? { exists: true, problem: file.problem }
    : { exists: true, ...(file.data?.mcp !== undefined && { mcpJson: JSON.stringify(file.data.mcp) }) };
  mcpTexts.set(path, { identity, value });
  return value;
}
