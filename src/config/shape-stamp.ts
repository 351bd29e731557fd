/**
 * The shape check's memory: `<agentDir>/pi-mcp/settings-checked.json` names
 * (keyed hashes only) the `mcp` texts that passed the shape check
 * (schema.ts), so a session whose settings did not change since their last
 * check skips it and never loads arktype, its types and their compiled
 * validators (about 18 MiB of Pi's heap and a third of a second of CPU at
 * every start).
 *
 * A key covers the `mcp` text exactly as written, pi-mcp's version, the shape
 * check's own identity (the source of schema.ts, the feature plugins' names,
 * the server-name rule, arktype's version) and this file's format: a change of
 * any of them is a text never checked, checked again in full. Only passes are
 * remembered: a text with a problem is checked, and reported, every time. The
 * rules between fields (resolve.ts) and everything `${NAME}` expands to are
 * checked at every load as before.
 *
 * Where the check's identity cannot be read (the CLI's bundle carries no
 * schema.ts), nothing is remembered and every load checks. The file is read
 * without following a link, written under its lock by the project's atomic
 * writer (0600), and a file that is not ours or is broken counts as empty and
 * is replaced on the next pass.
 */
import { createHash, createHmac, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { readFileNoFollow, withFileLock } from "./atomic-file.ts";
import { SERVER_NAME } from "./field-text.ts";
import { readPackageFile } from "./package-files.ts";
import { PI_MCP_VERSION } from "./settings-stamp.ts";
import { FEATURES, type ConfigIssue } from "../kernel/settings.ts";
import { PiMcpError, describeError } from "../kernel/errors.ts";
import { isRecord } from "../safety/keys.ts";

const STAMP_FORMAT = 1;
/** The newest passes kept: a few projects' settings and the global ones as they change. */
const MAX_KEPT = 32;
const HEX64 = /^[0-9a-f]{64}$/;

interface StampFile {
  readonly format: typeof STAMP_FORMAT;
  readonly salt: string;
  /** Keyed hashes of the texts that passed, newest first. */
  readonly passed: readonly string[];
}

export function shapeStampPath(agentDir: string): string {
  return join(agentDir, "pi-mcp", "settings-checked.json");
}

/** What the shape check is made of, or undefined when it cannot be told (then nothing is remembered). */
let identity: string | undefined | null = null;

function checkIdentity(): string | undefined {
  if (identity !== null) return identity;
  try {
    // The source, which the package ships: a built copy (the installed CLI) and the sources (Pi's loader) agree on it.
    const schema = readPackageFile("src/config/schema.ts");
    const arktypeEntry = createRequire(import.meta.url).resolve("arktype");
    const arktype = JSON.parse(readFileSync(join(dirname(arktypeEntry), "..", "package.json"), "utf8")) as { version?: unknown };
    identity = createHash("sha256")
      .update(JSON.stringify([schema, FEATURES, SERVER_NAME.source, String(arktype.version)]))
      .digest("hex");
  } catch {
    identity = undefined;
  }
  return identity;
}

async function readStamps(path: string): Promise<StampFile | undefined> {
  try {
    const data: unknown = JSON.parse(await readFileNoFollow(path));
    if (!isRecord(data) || data.format !== STAMP_FORMAT || typeof data.salt !== "string" || !HEX64.test(data.salt)) return undefined;
    const passed = Array.isArray(data.passed) ? data.passed.filter((key): key is string => typeof key === "string" && HEX64.test(key)) : [];
    return { format: STAMP_FORMAT, salt: data.salt, passed: passed.slice(0, MAX_KEPT) };
  } catch {
    return undefined;
  }
}

function keyOf(salt: string, text: string, checkId: string): string {
  return createHmac("sha256", salt)
    .update(JSON.stringify([STAMP_FORMAT, PI_MCP_VERSION, checkId, text]))
    .digest("hex");
}

/** Remembers that `text` passed (best effort: a file that cannot be written only means the next load checks again). */
async function rememberPass(path: string, text: string, checkId: string): Promise<void> {
  const lockFailed = (cause: unknown) =>
    new PiMcpError("lock_timeout", `${path} is locked by another writer (${describeError(cause)})`, { cause });
  await withFileLock(path, { followLinks: false, lockFailed }, async (file) => {
    const current = (await readStamps(path)) ?? { format: STAMP_FORMAT, salt: randomBytes(32).toString("hex"), passed: [] };
    const key = keyOf(current.salt, text, checkId);
    const passed = [key, ...current.passed.filter((other) => other !== key)].slice(0, MAX_KEPT);
    await file.write(`${JSON.stringify({ format: STAMP_FORMAT, salt: current.salt, passed })}\n`, 0o600);
  });
}

/**
 * The problems of one scope's `mcp` value (parsed from `text`) by the shape
 * check: none at once when this very text passed it before, else the check's
 * own answer (a pass is remembered).
 */
export async function checkedShape(agentDir: string, text: string, mcp: unknown, file: string): Promise<readonly ConfigIssue[]> {
  const path = shapeStampPath(agentDir);
  const checkId = checkIdentity();
  const stamps = checkId === undefined ? undefined : await readStamps(path);
  if (checkId !== undefined && stamps?.passed.includes(keyOf(stamps.salt, text, checkId))) return [];
  const { checkShape } = await import("./schema.ts");
  const issues = checkShape(mcp, file);
  if (issues.length === 0 && checkId !== undefined) await rememberPass(path, text, checkId).catch(() => undefined);
  return issues;
}
