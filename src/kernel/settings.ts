/** Where a definition came from. */
export type Scope = "global" | "project";
export type TransportKind = "stdio" | "http" | "sse";
export type AuthKind = "none" | "bearer" | "oauth";
/** `false` (no roots capability) or folders, absolute or relative to the project folder, `~` for the home folder. */
export type RootsSetting = false | readonly string[];
/** How the model reaches a server tool in Pi: declared, found by tool search, from codemode scripts, or not at all. */
export type Exposure = "direct" | "deferred" | "codemode" | "hidden";
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
  readonly exposure?: Exposure;
  /** Exposure per MCP tool name or glob; the first matching pattern wins. */
  readonly toolExposure?: Readonly<Record<string, Exposure>>;
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
  return definition !== undefined && definition.transport !== "stdio" && (definition.auth === undefined || definition.auth.type === "oauth");
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

/** The feature plugins a person may switch off (`mcp.features`); each is on unless set to false. */
export const FEATURES = ["resources", "prompts", "completion", "sampling", "elicitation", "roots", "logging", "instructions", "observer"] as const;
export type Feature = (typeof FEATURES)[number];

export interface EffectiveConfig {
  readonly valid: boolean;
  readonly issues: readonly ConfigIssue[];
  readonly connectTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly requestDeadlineMs: number;
  readonly retry: RetryPolicy;
  /** The default exposure of every server's tools (`direct` unless configured). */
  readonly exposure: Exposure;
  /** Which feature plugins run (`mcp.features`; a host built from these settings leaves out those set to false). */
  readonly features: Readonly<Record<Feature, boolean>>;
  /** The default roots of every server; absent: Pi's working folder. */
  readonly roots?: RootsSetting;
  /** Every server's default lifecycle (`eager` unless configured). */
  readonly lifecycle: Lifecycle;
  /** How long a lazy server may be unused before it is closed (default 300,000 ms). */
  readonly idleTimeoutMs: number;
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
  oauthRedirectUri: "http://127.0.0.1:19876/mcp/oauth/callback",
});
