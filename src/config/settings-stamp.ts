/**
 * The settings stamp: a digest of everything the effective MCP settings of a
 * session are made of, computed from the raw files without validating them
 * (no arktype), so the Pi entry can compute it while Pi loads the extension.
 *
 * It covers the `mcp` objects as written (global, and the project's when the
 * project is trusted), the values of every `${NAME}` they name, the variables
 * a local server inherits from Pi (`PATH`, `HOME`, ...), the stored OAuth
 * identity of every named server (not its tokens), the canonical project
 * folder, the trust decision, the agent folder and pi-mcp's version. Equal
 * stamps mean equal effective settings and credentials; the full host, which
 * validates the settings, records which catalogs a stamp's session offered
 * (src/runtime/catalog-cache.ts), and the entry offers them again only when
 * the stamp it computes is the same. The digest holds resolved values: it is
 * kept in memory and only stored salted (keyed hash).
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { canonicalPath, globalSettingsPath, projectSettingsPath } from "./paths.ts";
import { credentialStamp, readCredentialFile } from "./credential-stamp.ts";
import { referencedNames } from "./references.ts";
import { isRecord, ownValue, parseJson } from "../safety/keys.ts";

/** What a local server inherits from Pi's environment (the MCP SDK's default set); it decides which program a command names. */
export const INHERITED_VARIABLES = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"] as const;

/** Bumped when what the stamp covers changes: older records then match nothing. */
const STAMP_FORMAT = 1;

export interface StampInputs {
  readonly agentDir: string;
  readonly cwd: string;
  /** Whether the project's settings are read (Pi's effective trust). */
  readonly trusted: boolean;
  readonly env: NodeJS.ProcessEnv;
}

/** pi-mcp's version (its catalog checks and declared capabilities belong to the code that computed them). */
export const PI_MCP_VERSION: string = readVersion();

function readVersion(): string {
  try {
    const manifest = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version?: unknown };
    return typeof manifest.version === "string" ? manifest.version : "unknown";
  } catch {
    return "unknown";
  }
}

/** One settings file's `mcp` value as written: its JSON, `null` when absent, or what is wrong with the file. */
function mcpOf(path: string): { mcp: unknown; text: string } {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { mcp: undefined, text: code === "ENOENT" ? "absent" : `unreadable:${code ?? "?"}` };
  }
  try {
    const data = parseJson(text.replace(/^\uFEFF/, ""));
    const mcp = isRecord(data) ? data.mcp : undefined;
    return { mcp, text: isRecord(data) ? JSON.stringify(mcp ?? null) : "not-an-object" };
  } catch {
    return { mcp: undefined, text: "invalid-json" };
  }
}

function serverNames(mcp: unknown): string[] {
  return isRecord(mcp) && isRecord(mcp.servers) ? Object.keys(mcp.servers) : [];
}

/** The settings stamp of a session (see the module comment). Reads the files synchronously; never throws for their content. */
export function settingsDigest(inputs: StampInputs): string {
  const global = mcpOf(globalSettingsPath(inputs.agentDir));
  const project = inputs.trusted ? mcpOf(projectSettingsPath(inputs.cwd)) : { mcp: undefined, text: "not-read" };
  const names = [...referencedNames(project.mcp, referencedNames(global.mcp)), ...INHERITED_VARIABLES].sort();
  const credentials = readCredentialFile(inputs.agentDir);
  const servers = [...new Set([...serverNames(global.mcp), ...serverNames(project.mcp)])].sort();
  const parts = {
    format: STAMP_FORMAT,
    version: PI_MCP_VERSION,
    agentDir: inputs.agentDir,
    cwd: canonicalPath(inputs.cwd),
    trusted: inputs.trusted,
    global: global.text,
    project: project.text,
    env: names.map((name) => [name, ownValue(inputs.env, name) ?? null]),
    credentials: servers.map((server) => [server, credentialStamp(credentials, server)]),
  };
  return createHash("sha256").update(JSON.stringify(parts)).digest("hex");
}
