/**
 * Persisted catalogs: what the Pi entry reads while Pi loads the extension,
 * so the tools of every server whose catalog is known are registered at once
 * (Pi's registration is linear then, and quadratic after the session binds).
 * This file only reads and checks; it imports nothing heavy (no settings
 * validation, no MCP SDK, no plugin). The host writes (catalog-store.ts).
 *
 * `<agent dir>/pi-mcp/catalogs/` (0700) holds, each 0600:
 * - `index.json`: a random salt and one record per settings stamp
 *   (src/config/settings-stamp.ts) a session ran with: which catalogs it
 *   offered Pi, under which Pi names and exposures, its Instruction
 *   Snapshot text, and whether it covers every server the first model
 *   request of a run without a terminal UI would wait for (`complete`).
 *   Records are keyed by the stamp hashed with the salt.
 * - `<fingerprint>.json`: one server's validated catalog (its tools as the
 *   server described them, its instructions, its counts, and for a stdio
 *   server found to speak the 2025 era only that verdict, `era`, so its next
 *   connect skips the era probe: src/runtime/era.ts), named by a keyed
 *   hash of the server's name and everything that decides whether a
 *   connection may be reused: the resolved definition, the authentication
 *   identity, the declared capabilities, the project folder and trust (as the
 *   connection pool's key), the inherited environment and pi-mcp's version.
 *   The name is part of it: two servers never share (and overwrite) one
 *   file, however alike their definitions are.
 * No resolved value is stored: the stamp and the fingerprints are keyed
 * hashes, and a catalog that contains a value resolved from the settings is
 * not stored at all. A file that is not ours (another owner, a link, wider
 * modes, another format, broken JSON, a shape we do not write) is ignored:
 * nothing of it is offered, and the host writes it anew.
 */
import { createHmac } from "node:crypto";
import { constants, fstatSync, lstatSync, openSync, readFileSync, closeSync } from "node:fs";
import { join } from "node:path";
import type { Tool } from "@modelcontextprotocol/client";
import type { Exposure } from "../kernel/settings.ts";
import type { CatalogTool } from "./catalog.ts";
import type { EraVerdict } from "./era.ts";
import { isRecord, parseJson } from "../safety/keys.ts";

export const INDEX_FORMAT = "pi-mcp-catalog-index";
export const CATALOG_FORMAT = "pi-mcp-catalog";
/** 2: catalog files are named by the server's name and its catalog identity (1 named them by the identity alone). */
export const CACHE_VERSION = 2;
/** Setting this variable to `0` (or `off`) turns the persisted catalogs off: nothing is read or written, tools appear as servers connect. */
const CACHE_SWITCH = "PI_MCP_CATALOG_CACHE";

const HEX64 = /^[0-9a-f]{64}$/;
const EXPOSURES: readonly Exposure[] = ["direct", "deferred", "codemode", "hidden"];
/** Files above these sizes are not ours to read at start-up. */
const MAX_INDEX_BYTES = 8 * 1024 ** 2;
const MAX_CATALOG_BYTES = 128 * 1024 ** 2;

export function catalogFolder(agentDir: string): string {
  return join(agentDir, "pi-mcp", "catalogs");
}

export function indexPath(agentDir: string): string {
  return join(catalogFolder(agentDir), "index.json");
}

export function catalogPath(agentDir: string, fingerprint: string): string {
  return join(catalogFolder(agentDir), `${fingerprint}.json`);
}

/** Whether persisted catalogs are on (they are unless `PI_MCP_CATALOG_CACHE` is `0` or `off`). */
export function cacheEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env[CACHE_SWITCH]?.trim().toLowerCase();
  return value !== "0" && value !== "off" && value !== "false";
}

/** A keyed hash: what is stored in place of a digest of resolved settings. */
export function keyed(salt: string, digest: string): string {
  return createHmac("sha256", salt).update(digest).digest("hex");
}

/** The fingerprint (file name) of server `server`'s catalog under `identity` (the host's catalogIdentity): its own, whatever other servers' definitions are. */
export function catalogKey(salt: string, server: string, identity: string): string {
  return keyed(salt, JSON.stringify([server, identity]));
}

/** How many tools (and, when they were listed, resources and templates) the server offered. */
export interface CatalogCounts {
  readonly tools: number;
  readonly resources?: number;
  readonly resourceTemplates?: number;
}

/** One registered tool of a server, as Pi was given it. */
export interface CachedTool {
  readonly piName: string;
  readonly exposure: Exposure;
  readonly tool: Tool;
  /** The definition's JSON (what the host compares to see a change). */
  readonly json: string;
}

/** A validated tool of a catalog with its definition's JSON: the host's catalog entry (a type only: nothing of catalog.ts is loaded). */
export type CatalogEntry = CatalogTool;

/** One server's part of a session's start: the tools Pi was given, the server's instructions and counts. */
export interface CachedServer {
  readonly name: string;
  /** The tools Pi was given, under their Pi names and exposures. */
  readonly tools: readonly CachedTool[];
  /** The server's whole validated catalog (a tool left out for its name is here, not in `tools`). */
  readonly catalog: readonly CatalogEntry[];
  readonly instructions?: string;
  readonly counts: CatalogCounts;
  /** That the server (stdio) speaks the 2025 era only, as its connection found: its next connect skips the era probe (era.ts). */
  readonly era?: EraVerdict;
  /** Whether this server's catalog is the one a connection of `identity` (catalogIdentity in the host) would have. */
  matches(identity: string): boolean;
}

/** What a session found known when Pi loaded the extension. */
export interface CachedStart {
  /** Where it came from: the connection pool of this Pi process (a replaced session), or the files. */
  readonly source: "pool" | "files";
  readonly servers: readonly CachedServer[];
  /** The Instruction Snapshot's text for these servers, appended to the system prompt (absent: nothing). */
  readonly prompt?: string;
  /**
   * Whether these catalogs cover every server the first model request of a
   * run without a terminal UI would wait for (src/runtime/first-request.ts):
   * then nothing is waited for, and a quick `pi -p` need not load the rest
   * of pi-mcp before its first request.
   */
  readonly complete: boolean;
}

/** The index file as written (see the module comment). */
export interface IndexFile {
  readonly format: typeof INDEX_FORMAT;
  readonly version: typeof CACHE_VERSION;
  readonly salt: string;
  readonly starts: readonly StartRecord[];
}

export interface StartRecord {
  /** The settings stamp, keyed with the salt. */
  readonly key: string;
  readonly savedAt: number;
  readonly prompt?: string;
  /** Present (true) when the record covers every server the first request would wait for. */
  readonly complete?: true;
  readonly servers: readonly RecordServer[];
}

export interface RecordServer {
  readonly name: string;
  /** The catalog's fingerprint (its file name). */
  readonly catalog: string;
  /** `[Pi name, MCP tool name, exposure]` for every tool Pi was given, in the catalog's order. */
  readonly tools: readonly (readonly [string, string, Exposure])[];
}

export interface CatalogFile {
  readonly format: typeof CATALOG_FORMAT;
  readonly version: typeof CACHE_VERSION;
  readonly catalog: string;
  readonly server: string;
  readonly savedAt: number;
  readonly instructions?: string;
  readonly counts: CatalogCounts;
  readonly tools: readonly Tool[];
  readonly era?: EraVerdict;
}

/** A stored era verdict, when it is one we write: `{ kind: "legacy", at }`. */
function isEraVerdict(value: unknown): value is EraVerdict {
  return isRecord(value) && value.kind === "legacy" && isCount(value.at) && (value.at as number) > 0 && Object.keys(value).length === 2;
}

/** A file only we could have written: ours, a plain file (no link), no access for others. */
function ownedPrivately(info: { uid: number; mode: number }): boolean {
  const uid = process.getuid?.();
  return (uid === undefined || info.uid === uid) && (info.mode & 0o077) === 0;
}

/** The folder's checks: ours, a folder, private. Anything else makes every file in it foreign. */
function privateFolder(agentDir: string): boolean {
  try {
    const info = lstatSync(catalogFolder(agentDir));
    return info.isDirectory() && ownedPrivately(info);
  } catch {
    return false;
  }
}

/** Parsed JSON of one of our files, or undefined when it is missing or foreign. */
function readOwnFile(path: string, maxBytes: number): unknown {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  } catch {
    return undefined;
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile() || !ownedPrivately(info) || info.size > maxBytes) return undefined;
    return parseJson(readFileSync(fd, "utf8"));
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

const isText = (value: unknown): value is string => typeof value === "string";
const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

function recordServer(value: unknown): RecordServer | undefined {
  if (
    !isRecord(value) ||
    !isText(value.name) ||
    value.name === "" ||
    !isText(value.catalog) ||
    !HEX64.test(value.catalog) ||
    !Array.isArray(value.tools)
  )
    return undefined;
  const tools: (readonly [string, string, Exposure])[] = [];
  for (const entry of value.tools) {
    if (!Array.isArray(entry) || entry.length !== 3 || !isText(entry[0]) || !isText(entry[1]) || !EXPOSURES.includes(entry[2] as Exposure))
      return undefined;
    tools.push([entry[0], entry[1], entry[2] as Exposure]);
  }
  return { name: value.name, catalog: value.catalog, tools };
}

function startRecord(value: unknown): StartRecord | undefined {
  if (!isRecord(value) || !isText(value.key) || !HEX64.test(value.key) || !isCount(value.savedAt) || !Array.isArray(value.servers))
    return undefined;
  if (value.prompt !== undefined && !isText(value.prompt)) return undefined;
  if (value.complete !== undefined && value.complete !== true) return undefined;
  const servers = value.servers.map(recordServer);
  if (servers.some((server) => server === undefined)) return undefined;
  return {
    key: value.key,
    savedAt: value.savedAt,
    ...(value.prompt !== undefined && { prompt: value.prompt }),
    ...(value.complete === true && { complete: true as const }),
    servers: servers as RecordServer[],
  };
}

/** The index, when it is ours and whole; undefined for a missing, foreign or broken one (every record of it is ignored). */
export function readIndex(agentDir: string): IndexFile | undefined {
  if (!privateFolder(agentDir)) return undefined;
  const data = readOwnFile(indexPath(agentDir), MAX_INDEX_BYTES);
  if (
    !isRecord(data) ||
    data.format !== INDEX_FORMAT ||
    data.version !== CACHE_VERSION ||
    !isText(data.salt) ||
    !HEX64.test(data.salt) ||
    !Array.isArray(data.starts)
  )
    return undefined;
  const starts = data.starts.map(startRecord);
  if (starts.some((start) => start === undefined)) return undefined;
  return { format: INDEX_FORMAT, version: CACHE_VERSION, salt: data.salt, starts: starts as StartRecord[] };
}

/** A tool as we stored it: a name, and the optional fields Pi reads in the types Pi needs. */
function storedTool(value: unknown): value is Tool {
  if (!isRecord(value) || !isText(value.name) || value.name === "") return false;
  if (value.description !== undefined && !isText(value.description)) return false;
  if (value.title !== undefined && !isText(value.title)) return false;
  for (const field of ["inputSchema", "outputSchema", "annotations", "_meta"])
    if (value[field] !== undefined && !isRecord(value[field])) return false;
  return true;
}

/** One catalog file, when it is ours, whole, and the one asked for. */
export function readCatalog(agentDir: string, fingerprint: string, server: string): CatalogFile | undefined {
  if (!HEX64.test(fingerprint)) return undefined;
  const data = readOwnFile(catalogPath(agentDir, fingerprint), MAX_CATALOG_BYTES);
  if (
    !isRecord(data) ||
    data.format !== CATALOG_FORMAT ||
    data.version !== CACHE_VERSION ||
    data.catalog !== fingerprint ||
    data.server !== server
  )
    return undefined;
  if (!isCount(data.savedAt) || !Array.isArray(data.tools) || !data.tools.every(storedTool) || !isRecord(data.counts)) return undefined;
  if (data.instructions !== undefined && !isText(data.instructions)) return undefined;
  if (data.era !== undefined && !isEraVerdict(data.era)) return undefined;
  const counts = data.counts;
  if (
    counts.tools !== data.tools.length ||
    (counts.resources !== undefined && !isCount(counts.resources)) ||
    (counts.resourceTemplates !== undefined && !isCount(counts.resourceTemplates))
  )
    return undefined;
  return data as unknown as CatalogFile;
}

/**
 * The start recorded for one of `digests` (settings stamps, in order of
 * preference), with every catalog it names read and checked: all of it or
 * nothing (a missing or foreign catalog file makes the whole record unusable,
 * so what is offered is always one session's consistent view).
 */
export function readCachedStart(agentDir: string, digests: readonly string[]): CachedStart | undefined {
  const index = readIndex(agentDir);
  if (!index) return undefined;
  for (const digest of digests) {
    const key = keyed(index.salt, digest);
    const record = index.starts.find((start) => start.key === key);
    if (record) return startFromRecord(agentDir, index.salt, record);
  }
  return undefined;
}

function startFromRecord(agentDir: string, salt: string, record: StartRecord): CachedStart | undefined {
  const servers: CachedServer[] = [];
  for (const entry of record.servers) {
    const file = readCatalog(agentDir, entry.catalog, entry.name);
    if (!file) return undefined;
    const catalog = file.tools.map((tool) => ({ tool, json: JSON.stringify(tool) }));
    const byName = new Map(catalog.map((item) => [item.tool.name, item]));
    const tools: CachedTool[] = [];
    for (const [piName, toolName, exposure] of entry.tools) {
      const item = byName.get(toolName);
      if (!item) return undefined;
      tools.push({ piName, exposure, ...item });
    }
    const fingerprint = entry.catalog;
    servers.push({
      name: entry.name,
      tools,
      catalog,
      ...(file.instructions !== undefined && { instructions: file.instructions }),
      counts: file.counts,
      ...(file.era && { era: file.era }),
      matches: (identity) => catalogKey(salt, entry.name, identity) === fingerprint,
    });
  }
  return { source: "files", servers, ...(record.prompt !== undefined && { prompt: record.prompt }), complete: record.complete === true };
}
