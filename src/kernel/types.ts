import type { AuthProvider, Client, ClientCapabilities, Transport } from "@modelcontextprotocol/client";
import type { EffectiveConfig, Exposure, ServerEntry } from "./settings.ts";
import type { CallScope, HostServices, PiContent } from "./services.ts";

export type { PiContent };
import type { CatalogItem, ResourceListMethod } from "./protocol.ts";

/** Replaces every exact secret value resolved from settings with a placeholder. */
export interface Redactor {
  (text: string): string;
  /** The values it redacts (createRedactor sets it, so a narrower context can add its own). */
  readonly secrets?: readonly string[];
  /** The length of the longest text it replaces: a cut-off text can start with at most this many characters minus one of a secret. */
  readonly reach?: number;
  /** Every text it replaces (each secret in each of its forms), longest first. */
  readonly forms?: readonly string[];
}

/** What a host (one Pi session, or one CLI run) knows about its surroundings. */
export interface HostContext {
  readonly cwd: string;
  readonly agentDir: string;
  /** Private folder for this host's files (spills, saved binaries, logs). */
  readonly privateDir: string;
  readonly config: EffectiveConfig;
  readonly redact: Redactor;
  /** Cuts model-facing text to Pi's limits (2,000 lines / 50 KB). */
  readonly truncate: Truncator;
  /** Pi's tools, session, model and dialogs, where the surface has them. */
  readonly services: HostServices;
}

export interface Truncation {
  readonly text: string;
  readonly truncated: boolean;
}

export type Truncator = (text: string) => Truncation;

/** One server definition being connected by a host. */
export interface ConnectionContext {
  readonly host: HostContext;
  readonly server: ServerEntry;
  /** Appends to the server's retained log (stderr and MCP logging). */
  readonly log: (text: string) => void;
  /** The retained log itself (newest 256 KiB), for plugins that show or persist it. */
  readonly retainedLog: ServerLog;
}

/** A server's retained log (stderr and MCP logging, the newest 256 KiB): what plugins read and add. */
export interface ServerLog {
  append(data: string | Buffer): void;
  /** The retained text. */
  text(): string;
  /** Called after every append; returns the function that stops it. */
  onAppend(listener: () => void): () => void;
  /** How many bytes it holds now. */
  readonly bytes: number;
  /** How many older bytes were dropped to stay within the limit. */
  readonly droppedBytes: number;
  /** Whether its text is empty or ends with a line break (what is appended next starts a line). */
  readonly endsLine: boolean;
}

export type ClientCapabilitiesDraft = ClientCapabilities;

/** A request for suggested values of one prompt argument (`completion/complete`). */
export interface CompletionRequest {
  readonly client: Client;
  readonly requestTimeoutMs: number;
  readonly prompt: string;
  readonly argument: string;
  /** What was typed of the value so far. */
  readonly value: string;
  /** Arguments already given, which servers may use to narrow the values. */
  readonly context?: Readonly<Record<string, string>>;
  readonly signal?: AbortSignal;
  /** Appends to the server's retained log (a server that does not implement completion is noted once). */
  readonly log?: (text: string) => void;
}

export interface RequestOptions {
  /** Ends the request early (the caller gave up); the failure then says it was cancelled. */
  readonly signal?: AbortSignal | undefined;
}

/** Requests to one server. */
export interface ServerRequests {
  /** The server's request timeout (its own setting, else the global one), never above its request deadline. */
  readonly requestTimeoutMs: number;
  /**
   * Runs one request on the connected client. An expired HTTP session is
   * renewed (a fresh transport and initialize) and the request sent once
   * more; a failure names the server and the method (`docs prompts/get
   * failed: …`), says why (timed out, cancelled, connection lost) and is
   * redacted.
   */
  request<T>(method: string, work: (client: Client) => Promise<T>, options?: RequestOptions): Promise<T>;
}

/** A connection whose SDK client exists; handlers are registered on `client`. */
export interface LiveConnection extends ConnectionContext, ServerRequests {
  readonly client: Client;
  /** True while this connection may still deliver work to its session. */
  isCurrent(): boolean;
  /** The tool call in flight on this connection, if any (server requests are scoped to it). */
  activeCall(): CallScope | undefined;
  /** A resource list kept with the connection (every page; none when the server has no resources). */
  resourceList(method: ResourceListMethod): Promise<readonly CatalogItem[]>;
  /** Why the transport closed the connection itself (a message over the size cap), if it did. */
  closeCause(): Error | undefined;
}

export interface AuthHandle {
  readonly authProvider?: AuthProvider;
  readonly headers?: Readonly<Record<string, string>>;
  /** The credential values this authentication holds now (tokens, client secrets): redacted from what the SDK prints about it. */
  readonly secrets?: () => readonly string[];
}

export interface TransportContext extends ConnectionContext {
  readonly auth: AuthHandle | undefined;
}

export type AuthContext = ConnectionContext;

export interface TransportHandle {
  readonly transport: Transport;
  /** The child's process id for stdio transports. */
  readonly pid?: number;
  /** What the transport saw of its server, for the cause of a failure (stdio: the exit and the last stderr). */
  readonly evidence?: () => TransportEvidence;
}

export interface TransportEvidence {
  /** How the server's process ended, in words: "exited with code 1", "was stopped by signal SIGKILL". */
  readonly exit?: string;
  /** The end of what the server wrote to stderr, raw (the host redacts, strips and cuts it). */
  readonly stderrTail?: string;
}

/** What a tool's Pi name is decided from (the `toolName` hook starts from `mcp__<server>__<tool>`). */
export interface ToolNameContext {
  readonly server: string;
  readonly tool: string;
  /** Every tool name the server offers now (its catalog, this tool included). */
  readonly serverTools: readonly string[];
  /** Every configured server name (this one included). */
  readonly servers: readonly string[];
  /** Whether a name already belongs to another tool in this session (Pi cannot rename or remove a registered tool). */
  taken(name: string): boolean;
}

/** One MCP content block, as the server sent it (`type` is all that is checked). */
export type ContentBlock = Readonly<Record<string, unknown>> & { readonly type: string };

/** One MCP content block and what the mappers made of it. */
export interface MappedBlock {
  readonly source: ContentBlock;
  output?: PiContent[];
}

export interface MappedResult {
  blocks: MappedBlock[];
  /** Extra model-visible text appended after the blocks (e.g. structured content). */
  trailer: PiContent[];
  details: Record<string, unknown>;
  isError: boolean;
}

export interface ResultContext {
  readonly host: HostContext;
  readonly server: string;
  /** The MCP operation (tool name, or resource URI for resource reads). */
  readonly operation: string;
  readonly raw: Readonly<Record<string, unknown>>;
  /** Saves bytes privately and returns the file path. */
  saveFile(bytes: Uint8Array, hint: { mimeType?: string; name?: string }): Promise<string>;
}

export interface SpillRequest {
  readonly host: HostContext;
  readonly server: string;
  readonly operation: string;
  readonly text: string;
}

export interface SpillResult {
  readonly path: string;
}

/** The state a tool row shows in words (never by colour alone). */
export type RenderState = "pending" | "running" | "success" | "warning" | "failure" | "cancelled";

/** One titled block of the expanded view (arguments, output, stored content, ...). */
export interface RenderSection {
  title: string;
  lines: string[];
}

/**
 * How one tool row (a server tool or a fixed resource tool) is presented: the
 * observer builds it from persisted content and details, taps may refine it,
 * and Pi's renderers draw it. Text here may be raw server text: the drawing
 * side strips terminal controls and redacts settings' secrets from every string.
 */
export interface RenderModel {
  /** The MCP server ("" when the operation spans every server). */
  server: string;
  /** The original MCP operation: the server's tool name, or a method such as `resources/read`. */
  operation: string;
  /** One line of arguments. */
  argumentPreview: string;
  state: RenderState;
  /** The rest of the state line: content counts, progress, or the first line of an error. */
  summary: string;
  /** The expanded view, in order; empty while collapsed. */
  sections: RenderSection[];
}

/** A persisted (or, while running, partial) tool result, as Pi stores it. */
export interface RenderResult {
  readonly content: readonly Readonly<Record<string, unknown>>[];
  readonly details: Readonly<Record<string, unknown>>;
  readonly isError: boolean;
}

export interface RenderContext {
  readonly server: string;
  readonly operation: string;
  /** The Pi tool name (`mcp__server__tool`, `read_mcp_resource`). */
  readonly tool: string;
  readonly args: Readonly<Record<string, unknown>>;
  /** Absent while only the call is known. */
  readonly result: RenderResult | undefined;
  readonly partial: boolean;
  readonly expanded: boolean;
  /** Redacts settings' secrets: apply it (with terminal-control stripping) before cutting any text. */
  readonly redact: Redactor;
}

/** What the instruction snapshot is built from: servers whose tool catalog reached Pi, in name order. */
export interface SystemPromptContext {
  readonly host: HostContext;
  readonly servers: readonly {
    readonly name: string;
    readonly instructions: string | undefined;
    /** How the server's tools reach the model (from `exposure` settings), sorted. */
    readonly exposures: readonly Exposure[];
  }[];
}
