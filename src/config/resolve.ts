import { expandStrings, hasReference, type Expansion } from "./expand.ts";
import { formatPath } from "./field-text.ts";
import type { RawServer } from "./schema.ts";
import {
  DEFAULTS,
  FEATURES,
  type Feature,
  type AuthKind,
  type ConfigIssue,
  type ConfigSources,
  type ContextBudgetSetting,
  type ExposureSetting,
  type EffectiveConfig,
  type Lifecycle,
  type RetryPolicy,
  type RootsSetting,
  type Scope,
  type ServerDefinition,
  type ServerEntry,
  type TransportKind,
} from "../kernel/settings.ts";
import { ownValue, isRecord } from "../safety/keys.ts";
import { rootFolderProblem } from "./roots.ts";

/** One scope's `mcp` object as read from disk. */
export interface ScopeSettings {
  readonly scope: Scope;
  readonly file: string;
  /** The `mcp` value, or undefined when the file or the key is absent. */
  readonly mcp: unknown;
  /** Set when the file exists but could not be read or parsed. */
  readonly readIssue?: ConfigIssue;
  /** The problems of `mcp`'s written shape (schema.ts `checkShape`), found by whoever read it (load.ts, schema.ts `checkedScope`). */
  readonly shape: readonly ConfigIssue[];
}

/**
 * Merges the global and (trusted) project `mcp` objects by the spec's rules:
 * top-level timeouts and retry fields merge field by field (project wins); a
 * project server definition replaces the global one whole; a project `null`
 * or `{ "enabled": false }` masks the global definition.
 */
export function resolveConfig(
  global: ScopeSettings,
  project: ScopeSettings | undefined,
  env: NodeJS.ProcessEnv,
  sources: ConfigSources,
): EffectiveConfig {
  const scopes = project ? [global, project] : [global];
  const issues: ConfigIssue[] = [];
  for (const settings of scopes) {
    if (settings.readIssue) issues.push(settings.readIssue);
    else issues.push(...settings.shape);
  }
  const expansion: Expansion = { issues: [], secrets: new Set() };
  const servers = mergeServers(global, project).map((candidate) => buildEntry(candidate, issues, expansion, env));
  const [globalMcp, projectMcp] = [recordOf(global.mcp), recordOf(project?.mcp)];
  const roots = topLevelRoots(pickRoots([global, globalMcp], [project, projectMcp]), env, issues, expansion);
  issues.push(...expansion.issues);
  return {
    valid: issues.length === 0,
    issues,
    connectTimeoutMs: pickNumber("connectTimeoutMs", DEFAULTS.connectTimeoutMs, globalMcp, projectMcp),
    requestTimeoutMs: pickNumber("requestTimeoutMs", DEFAULTS.requestTimeoutMs, globalMcp, projectMcp),
    requestDeadlineMs: pickNumber("requestDeadlineMs", DEFAULTS.requestDeadlineMs, globalMcp, projectMcp),
    retry: mergeRetry(recordOf(globalMcp.retry), recordOf(projectMcp.retry)),
    exposure: pickExposure(globalMcp, projectMcp),
    contextBudget: pickContextBudget(globalMcp, projectMcp),
    features: mergeFeatures(recordOf(globalMcp.features), recordOf(projectMcp.features)),
    lifecycle: pickLifecycle(globalMcp, projectMcp),
    idleTimeoutMs: pickNumber("idleTimeoutMs", DEFAULTS.idleTimeoutMs, globalMcp, projectMcp),
    firstRequestWaitMs: pickNumber("firstRequestWaitMs", DEFAULTS.firstRequestWaitMs, globalMcp, projectMcp),
    ...roots,
    servers,
    secrets: expansion.secrets,
    sources,
  };
}

interface Candidate {
  readonly name: string;
  readonly scope: Scope;
  readonly file: string;
  readonly raw: Record<string, unknown>;
  readonly masked: boolean;
}

function mergeServers(global: ScopeSettings, project: ScopeSettings | undefined): Candidate[] {
  const globalServers = recordOf(recordOf(global.mcp).servers);
  const projectServers = recordOf(recordOf(project?.mcp).servers);
  const names = [...new Set([...Object.keys(globalServers), ...Object.keys(projectServers)])].sort();
  const candidates: Candidate[] = [];
  for (const name of names) {
    const inherited = ownValue(globalServers, name);
    if (project && Object.hasOwn(projectServers, name)) {
      const own = projectServers[name];
      if (own === null || isMask(own)) {
        if (isRecord(inherited)) candidates.push({ name, scope: "global", file: global.file, raw: inherited, masked: true });
        continue;
      }
      if (isRecord(own)) candidates.push({ name, scope: "project", file: project.file, raw: own, masked: false });
      continue;
    }
    if (isRecord(inherited)) candidates.push({ name, scope: "global", file: global.file, raw: inherited, masked: false });
  }
  return candidates;
}

/** `{ "enabled": false }` and nothing else: hides an inherited definition. */
export function isMask(value: unknown): boolean {
  return isRecord(value) && Object.keys(value).length === 1 && value.enabled === false;
}

function buildEntry(candidate: Candidate, issues: ConfigIssue[], expansion: Expansion, env: NodeJS.ProcessEnv): ServerEntry {
  const { name, scope, raw, masked, file } = candidate;
  const transport = transportOf(raw);
  const auth = transport === "stdio" ? "none" : authKindOf(raw); // a local server has no authentication, also when its definition is wrong
  const enabled = !masked && raw.enabled !== false;
  const base = { name, scope, enabled, masked, transport, auth, file, written: raw };
  if (masked) return base;
  const path = ["mcp", "servers", name];
  const prefix = formatPath(path);
  if (
    issues.some(
      (issue) =>
        issue.file === file && (issue.path === prefix || issue.path.startsWith(`${prefix}.`) || issue.path.startsWith(`${prefix}[`)),
    )
  ) {
    return base; // its shape is already reported; relational rules would only repeat it
  }
  const expanded = expandIn(file, raw as RawServer, env, path, expansion, enabled);
  const problems = checkRules(expanded, prefix, enabled, raw as RawServer);
  for (const message of problems) issues.push({ path: message.path, message: message.message, file });
  if (problems.length > 0) return base;
  rememberCredentials(expanded, expansion.secrets);
  return { ...base, definition: toDefinition(expanded, enabled) };
}

/** expandStrings, with a missing variable reported as a problem of the file that holds the value. */
function expandIn<T>(file: string, value: T, env: NodeJS.ProcessEnv, path: readonly string[], expansion: Expansion, strict: boolean): T {
  const before = expansion.issues.length;
  const expanded = expandStrings(value, env, path, expansion, strict);
  for (let index = before; index < expansion.issues.length; index++) expansion.issues[index] = { ...expansion.issues[index]!, file };
  return expanded;
}

/**
 * Credentials written literally in settings are as secret as expanded ones:
 * what a remote server is sent as credentials (header values, and the
 * credential after a header's scheme word, a bearer token, a client secret, a
 * URL's password), which a server's error page or an HTTP library's message
 * may quote back. Literal environment values stay visible: a local server is
 * not sent them over the network, and words such as a mode name would vanish
 * from every message (`get` still masks them).
 */
function rememberCredentials(server: RawServer, secrets: Set<string>): void {
  for (const value of Object.values(server.headers ?? {})) {
    secrets.add(value);
    const credential = /^[A-Za-z][\w-]*\s+(\S.*)$/s.exec(value.trim())?.[1];
    if (credential) secrets.add(credential);
  }
  if (server.auth?.type === "bearer") secrets.add(server.auth.token);
  if (server.auth?.type === "oauth" && server.auth.clientSecret) secrets.add(server.auth.clientSecret);
  const password = server.url ? URL.parse(server.url)?.password : undefined;
  if (password) secrets.add(password).add(safeDecode(password));
}

/** A percent-encoded URL part as written, decoded (as it is when a URL's password is sent). */
function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

const AUTH_KINDS: readonly AuthKind[] = ["none", "bearer", "oauth"];
const EXPOSURES: readonly ExposureSetting[] = ["auto", "direct", "deferred", "codemode", "hidden"];

/** The documented auth kinds only: a misspelt type is reported as a settings problem, and listed as "none". */
function authKindOf(raw: Record<string, unknown>): AuthKind {
  const type = isRecord(raw.auth) ? raw.auth.type : undefined;
  return AUTH_KINDS.find((kind) => kind === type) ?? "none";
}

/**
 * How the definition is reached: a command is always stdio (a `transport`
 * that says otherwise is a settings problem, not a remote server), a url
 * is `http` unless it names `sse`.
 */
function transportOf(raw: Record<string, unknown>): TransportKind {
  if (raw.command !== undefined || raw.url === undefined) return "stdio";
  return raw.transport === "sse" ? "sse" : "http";
}

const PROCESS_FIELDS = ["args", "cwd", "environment"] as const;
const REMOTE_FIELDS = ["headers", "auth"] as const;
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

/**
 * The rules that relate fields to each other. Value rules (URL shapes, empty
 * values) apply to expanded values; with `expanded` false (a definition about
 * to be written, or a disabled one) a value that holds a `${NAME}` is skipped.
 */
export function checkRules(server: RawServer, prefix: string, expanded: boolean, written: RawServer = server): ConfigIssue[] {
  const problems: ConfigIssue[] = [];
  const at = (field: string, message: string) => problems.push({ path: `${prefix}${field ? `.${field}` : ""}`, message });
  const hasCommand = server.command !== undefined;
  const hasUrl = server.url !== undefined;
  if (hasCommand === hasUrl) {
    at("", hasCommand ? "must have either command or url, not both" : "must have command (local) or url (remote)");
    return problems;
  }
  const checkable = (value: string) => expanded || !hasReference(value);
  problems.push(...rootFolderProblems(server.roots, `${prefix}.roots`, checkable));
  if (hasCommand) {
    if (server.command !== undefined && checkable(server.command) && server.command.trim() === "") at("command", "must not be empty");
    if (server.transport && server.transport !== "stdio")
      at("transport", `must be "stdio" for a command definition (was "${server.transport}")`);
    for (const field of REMOTE_FIELDS) if (server[field] !== undefined) at(field, "is not allowed on a local (command) definition");
    return problems;
  }
  if (server.transport === "stdio") at("transport", 'must be "http" or "sse" for a url definition (was "stdio")');
  for (const field of PROCESS_FIELDS) if (server[field] !== undefined) at(field, "is not allowed on a remote (url) definition");
  if (server.url !== undefined && checkable(server.url) && !isHttpUrl(server.url)) at("url", "must be an absolute http:// or https:// URL");
  else if (server.url !== undefined && checkable(server.url) && hasUserInfo(server.url)) {
    at(
      "url",
      "must not hold user:password@ (fetch refuses credentials in a URL): send them in a header instead, e.g. headers.Authorization, or use auth",
    );
  }
  // Header values as written: a literal one that HTTP cannot send is a settings problem; a resolved
  // `${NAME}` is only known at run time, and fails that server's request alone (redacted).
  for (const [name, value] of Object.entries(written.headers ?? {})) {
    const problem = headerProblem(name, hasReference(value) ? "" : value);
    if (problem) problems.push({ path: `${prefix}${formatPath(["x", "headers", name]).slice(1)}`, message: problem });
  }
  const auth = server.auth;
  if (auth?.type === "bearer" && Object.keys(server.headers ?? {}).some((header) => header.toLowerCase() === "authorization")) {
    at("auth", "bearer authentication cannot be combined with a configured Authorization header");
  }
  if (auth?.type === "bearer" && checkable(auth.token) && auth.token.trim() === "") at("auth.token", "must not be empty");
  if (auth?.type === "oauth" && auth.redirectUri !== undefined && checkable(auth.redirectUri) && !isLoopbackHttpUrl(auth.redirectUri)) {
    at("auth.redirectUri", "must be an http:// loopback URL (127.0.0.1, localhost or [::1])");
  }
  return problems;
}

/** Each `roots` entry that is not a folder pi-mcp can send (a URL, `~name`), with its path. */
function rootFolderProblems(roots: RootsSetting | undefined, path: string, checkable: (value: string) => boolean): ConfigIssue[] {
  if (!Array.isArray(roots)) return [];
  return roots.flatMap((folder, index) => {
    const problem = checkable(folder) ? rootFolderProblem(folder) : undefined;
    return problem ? [{ path: `${path}[${index}]`, message: problem }] : [];
  });
}

function hasUserInfo(text: string): boolean {
  const url = URL.parse(text);
  return url !== null && (url.username !== "" || url.password !== "");
}

/** An HTTP header name is a token (RFC 9110). */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * Why a header cannot be sent as configured, or undefined. The value is never
 * quoted (it may be a credential): the message names the character.
 */
function headerProblem(name: string, value: string): string | undefined {
  if (!HEADER_NAME.test(name)) return "is not a valid HTTP header name (letters, digits and !#$%&'*+-.^_`|~ only, no spaces)";
  // eslint-disable-next-line no-control-regex
  // fetch trims HTTP whitespace (a trailing \r from a .env edited on Windows is fine).
  const bad = /[\u0000\r\n]|[^\u0000-\u00ff]/.exec(value.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, ""))?.[0];
  if (bad === undefined) return undefined;
  const code = `U+${bad.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;
  return /[\r\n\u0000]/.test(bad)
    ? `must not contain a line break or NUL (${code}): an HTTP header value is one line`
    : `holds a character an HTTP header cannot carry (${code}; only Latin-1): percent-encode or base64 it as the server expects`;
}

function isHttpUrl(text: string): boolean {
  if (!/^https?:\/\//i.test(text)) return false; // the URL parser would turn "http:host" into "http://host/"
  const url = URL.parse(text);
  return url !== null && (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "";
}

export function isLoopbackHttpUrl(text: string): boolean {
  const url = URL.parse(text);
  return url !== null && url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname);
}

function toDefinition(server: RawServer, enabled: boolean): ServerDefinition {
  const common = {
    enabled,
    ...(server.connectTimeoutMs !== undefined && { connectTimeoutMs: server.connectTimeoutMs }),
    ...(server.requestTimeoutMs !== undefined && { requestTimeoutMs: server.requestTimeoutMs }),
    ...(server.requestDeadlineMs !== undefined && { requestDeadlineMs: server.requestDeadlineMs }),
    ...(server.tools !== undefined && { tools: server.tools }),
    ...(server.exposure !== undefined && { exposure: server.exposure }),
    ...(server.toolExposure !== undefined && { toolExposure: server.toolExposure }),
    ...(server.roots !== undefined && { roots: server.roots }),
    ...(server.lifecycle !== undefined && { lifecycle: server.lifecycle }),
    ...(server.idleTimeoutMs !== undefined && { idleTimeoutMs: server.idleTimeoutMs }),
  };
  if (server.command !== undefined) {
    return {
      ...common,
      transport: "stdio",
      command: server.command,
      args: server.args ?? [],
      ...(server.cwd !== undefined && { cwd: server.cwd }),
      environment: server.environment ?? {},
    };
  }
  return {
    ...common,
    transport: server.transport === "sse" ? "sse" : "http",
    url: server.url as string,
    headers: server.headers ?? {},
    ...(server.auth !== undefined && { auth: server.auth }),
  };
}

function recordOf(value: unknown): Record<string, unknown> {
  return isRecord(value) ? value : {};
}

function pickNumber(key: string, fallback: number, ...layers: Record<string, unknown>[]): number {
  let value = fallback;
  for (const layer of layers) if (typeof layer[key] === "number") value = layer[key] as number;
  return value;
}

function pickExposure(...layers: Record<string, unknown>[]): ExposureSetting {
  let exposure: ExposureSetting = "auto";
  for (const layer of layers) exposure = EXPOSURES.find((known) => known === layer.exposure) ?? exposure;
  return exposure;
}

/** `mcp.contextBudget`: the project's, else the global one, else 10% (a value of the wrong shape is a settings problem, and ignored here). */
function pickContextBudget(...layers: Record<string, unknown>[]): ContextBudgetSetting {
  let budget: ContextBudgetSetting = DEFAULTS.contextBudget;
  for (const { contextBudget: value } of layers) {
    if (typeof value === "number" && Number.isInteger(value) && value > 0) budget = { tokens: value };
    else if (typeof value === "string" && /^\d+(\.\d+)?%$/.test(value)) {
      const percent = Number(value.slice(0, -1));
      if (percent > 0 && percent <= 100) budget = { percent };
    }
  }
  return budget;
}

const LIFECYCLES: readonly Lifecycle[] = ["eager", "lazy"];

function pickLifecycle(...layers: Record<string, unknown>[]): Lifecycle {
  let lifecycle: Lifecycle = "eager";
  for (const layer of layers) lifecycle = LIFECYCLES.find((known) => known === layer.lifecycle) ?? lifecycle;
  return lifecycle;
}

/** The top-level `roots` and the file it is in: the project's replaces the global one (a list is one value, not merged). */
function pickRoots(...layers: [ScopeSettings | undefined, Record<string, unknown>][]): { roots: RootsSetting; file: string } | undefined {
  let picked: { roots: RootsSetting; file: string } | undefined;
  for (const [settings, layer] of layers) {
    if (settings && (layer.roots === false || Array.isArray(layer.roots)))
      picked = { roots: layer.roots as RootsSetting, file: settings.file };
  }
  return picked;
}

/**
 * The top-level `roots`, `${NAME}` expanded like every server string (it is
 * every server's default), each folder checked like a server's own.
 */
function topLevelRoots(
  picked: ReturnType<typeof pickRoots>,
  env: NodeJS.ProcessEnv,
  issues: ConfigIssue[],
  expansion: Expansion,
): { roots?: RootsSetting } {
  if (!picked) return {};
  if (picked.roots === false) return { roots: false };
  const roots = expandIn(picked.file, picked.roots, env, ["mcp", "roots"], expansion, true);
  issues.push(...rootFolderProblems(roots, "mcp.roots", () => true).map((issue) => ({ ...issue, file: picked.file })));
  return { roots };
}

/** `features` merge feature by feature (project wins); a feature not set is on. */
function mergeFeatures(global: Record<string, unknown>, project: Record<string, unknown>): Record<Feature, boolean> {
  const features = {} as Record<Feature, boolean>;
  for (const feature of FEATURES)
    features[feature] = [project[feature], global[feature]].find((value) => typeof value === "boolean") !== false;
  return features;
}

function mergeRetry(global: Record<string, unknown>, project: Record<string, unknown>): RetryPolicy {
  const pick = (key: keyof RetryPolicy) => pickNumber(key, DEFAULTS.retry[key], global, project);
  return {
    maxRetries: pick("maxRetries"),
    initialDelayMs: pick("initialDelayMs"),
    maxDelayMs: pick("maxDelayMs"),
    backoffFactor: pick("backoffFactor"),
  };
}
