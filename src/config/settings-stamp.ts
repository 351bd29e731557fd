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
import { canonicalPath, globalSettingsPath, projectSettingsPath } from "./paths.ts";
import { credentialStamp, readCredentialFile } from "./credential-stamp.ts";
import { referencedNames } from "./references.ts";
import { readMcpSettingsSync } from "./settings-read.ts";
import { readPackageFile } from "./package-files.ts";
import { isRecord, ownValue } from "../safety/keys.ts";
import { DEFAULTS } from "../kernel/settings.ts";

/** What a local server inherits from Pi's environment (the MCP SDK's default set); it decides which program a command names. */
export const INHERITED_VARIABLES = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"] as const;

/** Bumped when what the stamp covers changes: older records then match nothing. */
const STAMP_FORMAT = 2;

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
    const manifest = JSON.parse(readPackageFile("package.json")) as { version?: unknown };
    return typeof manifest.version === "string" ? manifest.version : "unknown";
  } catch {
    return "unknown";
  }
}

/** What the stamp takes from one settings file: its `mcp` value as written (JSON, or what is wrong), the variables and servers it names. */
interface McpFacts {
  readonly text: string;
  readonly names: readonly string[];
  readonly servers: readonly string[];
  /** `firstRequestWaitMs` and `connectTimeoutMs` as written, if they are. */
  readonly firstRequestWaitMs?: unknown;
  readonly connectTimeoutMs?: unknown;
}

/** The facts of each file's current `mcp` text: a stamp is computed several times per session start, the text walked once. */
const known = new Map<string, McpFacts>();

function mcpFacts(path: string): McpFacts {
  const read = readMcpSettingsSync(path);
  const text = !read.exists ? "absent" : read.problem ? `problem:${read.problem}` : (read.mcpJson ?? "null");
  const last = known.get(path);
  if (last?.text === text) return last;
  // Only read here (own values and keys): the objects need no prototype-free copy.
  const mcp: unknown = read.mcpJson === undefined ? undefined : JSON.parse(read.mcpJson);
  const servers = isRecord(mcp) && isRecord(mcp.servers) ? Object.keys(mcp.servers) : [];
  const facts = {
    text,
    names: [...referencedNames(mcp)],
    servers,
    firstRequestWaitMs: isRecord(mcp) ? ownValue(mcp, "firstRequestWaitMs") : undefined,
    connectTimeoutMs: isRecord(mcp) ? ownValue(mcp, "connectTimeoutMs") : undefined,
  };
  known.set(path, facts);
  return facts;
}

/** How long the first model request of a run may wait, as far as the raw files tell (0 and 0: not at all). */
export interface FirstRequestBound {
  /** For each server, from its start: `firstRequestWaitMs`. */
  readonly servers: number;
  /** For pi-mcp's own start-up until the servers start: `connectTimeoutMs` (top level). */
  readonly startUp: number;
}

/**
 * The longest the first model request of a run may wait (no validation):
 * nothing when neither the global nor the project settings (trusted or not:
 * this only says whether there may be something to wait for) name a server,
 * or the wait is written as 0; else the values as written (the project's win
 * when it is trusted, the global ones hold when not: the larger of the two),
 * or their defaults. Never throws for the files' content.
 */
export function firstRequestBound(agentDir: string, cwd: string): FirstRequestBound {
  const global = mcpFacts(globalSettingsPath(agentDir));
  const project = mcpFacts(projectSettingsPath(cwd));
  if (global.servers.length === 0 && project.servers.length === 0) return { servers: 0, startUp: 0 };
  const written = (key: "firstRequestWaitMs" | "connectTimeoutMs") => {
    const value = (facts: McpFacts) =>
      Number.isSafeInteger(facts[key]) && (facts[key] as number) >= 0 ? (facts[key] as number) : undefined;
    const untrusted = value(global) ?? DEFAULTS[key];
    return Math.max(untrusted, value(project) ?? untrusted);
  };
  const servers = written("firstRequestWaitMs");
  return servers === 0 ? { servers: 0, startUp: 0 } : { servers, startUp: written("connectTimeoutMs") };
}

/** The settings stamp of a session (see the module comment). Reads the files synchronously; never throws for their content. */
export function settingsDigest(inputs: StampInputs): string {
  const global = mcpFacts(globalSettingsPath(inputs.agentDir));
  const project: McpFacts = inputs.trusted ? mcpFacts(projectSettingsPath(inputs.cwd)) : { text: "not-read", names: [], servers: [] };
  const names = [...new Set([...global.names, ...project.names, ...INHERITED_VARIABLES])].sort();
  const credentials = readCredentialFile(inputs.agentDir);
  const servers = [...new Set([...global.servers, ...project.servers])].sort();
  const parts = {
    format: STAMP_FORMAT,
    version: PI_MCP_VERSION,
    agentDir: inputs.agentDir,
    cwd: canonicalPath(inputs.cwd),
    trusted: inputs.trusted,
    // Hashed on their own: a large `mcp` object is not copied into the JSON below.
    global: sha256(global.text),
    project: sha256(project.text),
    env: names.map((name) => [name, ownValue(inputs.env, name) ?? null]),
    credentials: servers.map((server) => [server, credentialStamp(credentials, server)]),
  };
  return sha256(JSON.stringify(parts));
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
