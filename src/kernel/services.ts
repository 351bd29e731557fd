/*
 * What a host offers plugins beyond MCP itself: Pi's tools, session, model
 * and dialogs. Each is absent where the surface has none (the CLI's `test`),
 * and a feature that needs one declines politely without it.
 */

/** Pi-native content: text or an image. */
export type PiContent = { type: "text"; text: string } | { type: "image"; data: string; mimeType: string };

/** What a tool call gives Pi (server tools and fixed tools alike). */
export interface ToolOutcome {
  readonly content: PiContent[];
  readonly details: Record<string, unknown>;
  readonly isError: boolean;
}

export interface ProgressUpdate {
  readonly progress: number;
  readonly total?: number;
  readonly message?: string;
}

export interface CallOptions {
  readonly signal?: AbortSignal | undefined;
  readonly onProgress?: (update: ProgressUpdate) => void;
  /** The call runs in the foreground of a session with a UI: server requests may ask a person. */
  readonly interactive?: boolean;
}

/** A Pi tool that a plugin owns (not one per server tool), e.g. `read_mcp_resource`. */
export interface FixedTool {
  readonly name: string;
  readonly label: string;
  readonly description: string;
  /** JSON Schema of the arguments. */
  readonly parameters: Record<string, unknown>;
  execute(args: Record<string, unknown>, options: CallOptions): Promise<ToolOutcome>;
}

export interface PiToolRegistry {
  /** Registers (or re-registers) a fixed tool; it starts inactive. */
  define(tool: FixedTool): void;
  setActive(name: string, active: boolean): void;
}

/** A model-visible message for the next turn, persisted in the session like Pi's custom messages. */
export interface QueuedMessage {
  readonly customType: string;
  readonly content: string;
  readonly details?: Record<string, unknown>;
}

/** A model-visible message with Pi content (text and images), stored in the session as it is sent. */
export interface SessionMessage {
  readonly customType: string;
  readonly content: readonly PiContent[];
  readonly details?: Record<string, unknown>;
}

export interface SessionServices {
  /** Appends a custom entry to the session (not sent to the model). */
  append(customType: string, data: unknown): void;
  /** The data of every custom entry of that type on the active branch, oldest first. */
  entries(customType: string): unknown[];
  /** Adds a message to the conversation, delivered with the next turn; never starts a turn. */
  queueMessage(message: QueuedMessage): void;
  /**
   * Adds a message (text and images) to the conversation now: Pi stores it on
   * the active branch at once (or right after a turn that is running), so it
   * reaches the model with the next turn and follows `/resume`, `/fork` and
   * `/tree` like any other message. Never starts a turn. (Optional so that
   * stand-ins written before it need not change.)
   */
  addMessage?(message: SessionMessage): void;
  /** Called after the active branch changed (`/tree`, `/fork`, `/resume`). */
  onBranchChange(listener: () => void): () => void;
  /** The images the conversation's next model request carries (optional, so that stand-ins written before it need not change). */
  images?(): ConversationImages;
}

/** The images of what the next model request carries: the active branch, after Pi's compaction. */
export interface ConversationImages {
  /** The base64 data of each, oldest first. */
  readonly data: readonly string[];
  /** How many of them come after the last model answer (providers send those in one message). */
  readonly sinceAssistant: number;
  /** Which model answer is the last one: it changes with every answer. */
  readonly turn: string | undefined;
}

export type SamplingContent =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "image"; readonly data: string; readonly mimeType: string }
  | { readonly type: "tool_use"; readonly id: string; readonly name: string; readonly input: Record<string, unknown> }
  | { readonly type: "tool_result"; readonly toolUseId: string; readonly content: readonly SamplingContent[]; readonly isError?: boolean };

export interface SamplingRequest {
  readonly systemPrompt?: string;
  readonly messages: readonly { readonly role: "user" | "assistant"; readonly content: readonly SamplingContent[] }[];
  readonly maxTokens: number;
  readonly temperature?: number;
  readonly stopSequences?: readonly string[];
  readonly tools?: readonly { readonly name: string; readonly description?: string; readonly inputSchema: Record<string, unknown> }[];
}

export interface SamplingResult {
  readonly model: string;
  readonly content: readonly SamplingContent[];
  readonly stopReason: "endTurn" | "maxTokens" | "stopSequence" | "toolUse";
}

/** Pi's active model and credentials, used for MCP sampling; never starts an agent turn. */
export interface ModelService {
  complete(request: SamplingRequest, signal: AbortSignal): Promise<SamplingResult>;
}

/** Pi's dialogs; present only when a person can answer (TUI, RPC with a client). */
export interface UiService {
  input(title: string, placeholder?: string, signal?: AbortSignal): Promise<string | undefined>;
  select(title: string, options: readonly string[], signal?: AbortSignal): Promise<string | undefined>;
  confirm(title: string, message: string, signal?: AbortSignal): Promise<boolean>;
  notify(text: string, level: "info" | "warning" | "error"): void;
}

export interface HostServices {
  readonly piTools?: PiToolRegistry;
  readonly session?: SessionServices;
  readonly model?: ModelService;
  readonly ui?: UiService;
  readonly images?: ImageService;
}

/** Pi's own image resizing (off the main thread): an image a model would take if it were smaller. */
export interface ImageService {
  /** A PNG, JPEG, GIF or WebP image made to fit `limits` (its base64 within `maxBytes`), or undefined when it cannot be. */
  fit(bytes: Uint8Array, mimeType: string, limits: ImageLimits): Promise<FittedImage | undefined>;
}

export interface ImageLimits {
  readonly maxWidth: number;
  readonly maxHeight: number;
  /** Of base64. */
  readonly maxBytes: number;
}

export interface FittedImage {
  /** Base64. */
  readonly data: string;
  readonly mimeType: string;
  readonly width: number;
  readonly height: number;
  readonly originalWidth: number;
  readonly originalHeight: number;
}

/** The tool call a server request arrived during: interactive callbacks are scoped to it. */
export interface CallScope {
  readonly signal: AbortSignal | undefined;
  /** Whether this call may ask a person (a UI exists and the call is in the foreground). */
  readonly interactive: boolean;
}
