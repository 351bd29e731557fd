/** Where a definition came from. */
export type Scope = "global" | "project";
export type TransportKind = "stdio" | "http" | "sse";
export type AuthKind = "none" | "bearer" | "oauth";
/** `false` (no roots capability) or folders, absolute or relative to the project folder, `~` for the home folder. */
export type RootsSetting = false | readonly string[];
/** How the model reaches a server tool in Pi: declared, found by tool search, from codemode scripts, or not at all. */
export type Exposure = "direct" | "deferred" | "codemode" | "hidden";
/**
 * An exposure as the settings name it: one of Exposure, or `auto` (the
 * default): direct while the MCP tool definitions fit the context budget,
 * else deferred, decided per server (src/runtime/context-budget.ts).
 */
export type ExposureSetting = Exposure | "auto";
/** `mcp.contextBudget`: a share of the active model's context window, or a number of tokens. */
export type ContextBudgetSetting = { readonly percent: number } | { readonly tokens: number };
/** When a server runs: `eager` (connects at session start) or `lazy` (only when one of its tools or a command needs it, closed again when idle). */
export type Lifecycle = "eager" | "lazy";

export interface RetryPolicy {
  readonly maxRetries: number;
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
  readonly backoffFactor: number;
}

export interface ToolFilter {
  readonly include?: readonly string[];
  readonly exclude?: readonly string[];
}

export type AuthConfig =
  | { readonly type: "none" }
  | { readonly type: "bearer"; readonly token: string }
  | {
      readonly type: "oauth";
      readonly clientId?: string;
      readonly clientSecret?: string;
      readonly redirectUri?: string;
      readonly scopes?: readonly string[];
    };

interface DefinitionCommon {
  readonly enabled: boolean;
  readonly connectTimeoutMs?: number;
  readonly requestTimeoutMs?: number;
  /** The most a request may take in all, however often progress restarted its timeout (else the top-level one). */
  readonly requestDeadlineMs?: number;
  readonly tools?: ToolFilter;
  /** The server's default exposure (else the top-level one). */
  readonly exposure?: ExposureSetting;
  /** Exposure per MCP tool name or glob; the first matching pattern wins. */
  readonly toolExposure?: Readonly<Record<string, ExposureSetting>>;
  /** The server's roots (else the top-level ones): `false` declares none, folders replace Pi's working folder. */
  readonly roots?: RootsSetting;
  /** When the server runs (else the top-level `lifecycle`). */
  readonly lifecycle?: Lifecycle;
  /** How long a lazy server may be unused before it is closed (else the top-level one). */
  readonly idleTimeoutMs?: number;
}

export interface StdioDefinition extends DefinitionCommon {
  readonly transport: "stdio";
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd?: string;
  readonly environment: Readonly<Record<string, string>>;
}

export interface RemoteDefinition extends DefinitionCommon {
  readonly transport: "http" | "sse";
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly auth?: AuthConfig;
}

/** A validated server definition with every `${NAME}` already expanded. */
export type ServerDefinition = StdioDefinition | RemoteDefinition;

/** Whether a definition may use OAuth: a remote server with `auth` omitted (discovery on its first 401) or `{type: "oauth"}`. */
export function usesOAuth(definition: ServerDefinition | undefined): definition is RemoteDefinition {
  return (
    definition !== undefined && definition.transport !== "stdio" && (definition.auth === undefined || definition.auth.type === "oauth")
  );
}

/**
 * The longest the first model request of a run without a terminal UI waits
 * for `entry` while its catalog is not known: the `firstRequestWaitMs`
 * setting, never beyond the server's connectTimeoutMs; 0 for a server that is
 * not started with the session (disabled, masked, broken, or lazy).
 */
export function firstRequestWaitOf(
  config: Pick<EffectiveConfig, "firstRequestWaitMs" | "connectTimeoutMs" | "lifecycle">,
  entry: Pick<ServerEntry, "enabled" | "masked" | "definition">,
): number {
  const definition = entry.definition;
  if (!entry.enabled || entry.masked || !definition || (definition.lifecycle ?? config.lifecycle) === "lazy") return 0;
  return Math.min(config.firstRequestWaitMs, definition.connectTimeoutMs ?? config.connectTimeoutMs);
}

/** One named server as the merged configuration sees it. */
export interface ServerEntry {
  readonly name: string;
  /** The scope whose definition is in effect (for a masked server: the masked definition's scope). */
  readonly scope: Scope;
  readonly enabled: boolean;
  /** A project `null` or `{ "enabled": false }` hides the global definition. */
  readonly masked: boolean;
  readonly transport: TransportKind;
  readonly auth: AuthKind;
  /** The settings file the definition is in (for a masked server: the masked definition's file). */
  readonly file: string;
  /** The definition as written in that file: `${NAME}` unexpanded, literal values as they are (never shown unredacted). */
  readonly written: Readonly<Record<string, unknown>>;
  /** Present when the definition validated and expanded; absent for masked or broken entries. */
  readonly definition?: ServerDefinition;
}

/** How `list` and `get` name a server's authentication: an omitted `auth` on a remote server is OAuth on demand, unlike an explicit `none`. */
export type ListedAuth = AuthKind | "oauth-on-demand";

export function listedAuth(entry: Pick<ServerEntry, "transport" | "auth" | "written">): ListedAuth {
  return entry.transport !== "stdio" && entry.written.auth === undefined ? "oauth-on-demand" : entry.auth;
}

export interface ConfigIssue {
  /** Dotted settings path, e.g. `mcp.servers.docs.auth.type`. */
  readonly path: string;
  readonly message: string;
  /** The file the problem is in, when it is about one file. */
  readonly file?: string;
}

/**
 * The feature plugins, in the order they are applied: each MCP feature that
 * a person may switch off (`mcp.features`; each is on unless set to false).
 * This is the one list of them: the settings schema (src/config/schema.ts)
 * and the merge of the scopes (src/config/resolve.ts) are derived from it,
 * the composition root loads exactly these (src/composition.ts: one loader
 * per name, which the compiler holds to this list and to the plugin's own
 * name), and the README's list is checked against it (test/cli/readme.test.ts).
 */
export const FEATURES = [
  "resources",
  "roots",
  "logging",
  "instructions",
  "prompts",
  "completion",
  "sampling",
  "elicitation",
  "observer",
] as const;
export type Feature = (typeof FEATURES)[number];

export interface EffectiveConfig {
  readonly valid: boolean;
  readonly issues: readonly ConfigIssue[];
  readonly connectTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly requestDeadlineMs: number;
  readonly retry: RetryPolicy;
  /** The default exposure of every server's tools (`auto` unless configured). */
  readonly exposure: ExposureSetting;
  /** How much of the context MCP tool definitions of `auto` servers may take (`mcp.contextBudget`, default 10% of the model's context window). */
  readonly contextBudget: ContextBudgetSetting;
  /** Which feature plugins run (`mcp.features`; a host built from these settings leaves out those set to false). */
  readonly features: Readonly<Record<Feature, boolean>>;
  /** The default roots of every server; absent: Pi's working folder. */
  readonly roots?: RootsSetting;
  /** Every server's default lifecycle (`eager` unless configured). */
  readonly lifecycle: Lifecycle;
  /** How long a lazy server may be unused before it is closed (default 300,000 ms). */
  readonly idleTimeoutMs: number;
  /**
   * How long the first agent start of a run without a terminal UI (print,
   * JSON, RPC) waits for eager servers whose catalog is not known, so the
   * first model request carries their tools (default 5,000 ms; 0: no wait;
   * never longer than a server's connectTimeoutMs).
   */
  readonly firstRequestWaitMs: number;
  /** Sorted by name. When `valid` is false the host connects nothing. */
  readonly servers: readonly ServerEntry[];
  /** Every value substituted for a `${NAME}`: redacted wherever text leaves the host. */
  readonly secrets: ReadonlySet<string>;
  readonly sources: ConfigSources;
}

export interface ConfigSources {
  readonly globalPath: string;
  readonly projectPath: string;
  /** Whether the project file was read. */
  readonly projectTrusted: boolean;
}

export const DEFAULTS = Object.freeze({
  connectTimeoutMs: 10_000,
  requestTimeoutMs: 60_000,
  /** Progress restarts a request's timeout; this bounds it in all (10 minutes). */
  requestDeadlineMs: 600_000,
  retry: Object.freeze({ maxRetries: 2, initialDelayMs: 1_000, maxDelayMs: 30_000, backoffFactor: 1.5 }),
  shutdownBudgetMs: 5_000,
  /** A lazy server unused this long is closed (5 minutes). */
  idleTimeoutMs: 300_000,
  /** The first request of a run without a terminal UI waits this long for servers whose catalog is not known. */
  firstRequestWaitMs: 5_000,
  /** `mcp.contextBudget` unless configured: 10% of the active model's context window. */
  contextBudget: Object.freeze({ percent: 10 }) as ContextBudgetSetting,
  oauthRedirectUri: "http://127.0.0.1:19876/mcp/oauth/callback",
});
