import {
  HookMap,
  AsyncParallelHook,
  AsyncSeriesBailHook,
  AsyncSeriesHook,
  AsyncSeriesWaterfallHook,
  SyncHook,
  SyncWaterfallHook,
} from "tapable";
import type {
  ClientCapabilitiesDraft,
  CompletionRequest,
  ContentBlock,
  PiContent,
  ConnectionContext,
  HostContext,
  LiveConnection,
  MappedResult,
  RenderContext,
  RenderModel,
  ResultContext,
  SpillRequest,
  SpillResult,
  ToolNameContext,
  TransportContext,
  AuthContext,
  TransportHandle,
  AuthHandle,
  SystemPromptContext,
} from "./types.ts";
import type { PluginHost } from "./host.ts";

/**
 * Every kernel hook, in one place. Only the kernel and the host call hooks;
 * plugins tap them, always with their own name.
 *
 * - Bail hooks: the first plugin that answers wins (transport, auth, spill).
 * - Waterfall hooks: each tap refines the value and must return it
 *   (capabilities, tool names, result mapping, rendering).
 * - Series/parallel hooks: lifecycle notifications.
 */
export function createHooks() {
  return Object.freeze({
    /** A host starts (a Pi session, `pi-mcp test`), before its first server connects: plugins set up what they keep for it. The host fires it. */
    hostStart: new AsyncSeriesHook<[PluginHost]>(["host"]),
    /** The host is shutting down; taps release what they own. Runs in parallel, after the host closed its connections. */
    hostShutdown: new AsyncParallelHook<[PluginHost]>(["host"]),

    /** Which client capabilities to declare to a server; features add theirs. */
    clientCapabilities: new SyncWaterfallHook<[ClientCapabilitiesDraft, ConnectionContext]>(["capabilities", "connection"]),
    /** A client was built and is about to connect: register request and notification handlers. */
    clientCreated: new SyncHook<[LiveConnection]>(["connection"]),
    /** A server finished connecting (and its catalogs are loaded). */
    serverConnected: new AsyncSeriesHook<[LiveConnection]>(["connection"]),
    /** A live connection's settings changed without a reconnect (settings applied in the session): e.g. roots to announce again. */
    connectionUpdated: new SyncHook<[LiveConnection]>(["connection"]),
    /** A server connection ended, for whatever reason. */
    serverDisconnected: new SyncHook<[ConnectionContext, string]>(["connection", "reason"]),

    /** Build the SDK transport for a server definition. */
    createTransport: new AsyncSeriesBailHook<[TransportContext], TransportHandle | undefined>(["transport"]),
    /** Supply authentication (an SDK auth provider and/or headers) for a remote server. */
    auth: new AsyncSeriesBailHook<[AuthContext], AuthHandle | undefined>(["auth"]),
    /** What identifies the credentials a server's connection uses; a retained connection is reused only when it is unchanged. */
    authIdentity: new SyncWaterfallHook<[string, ConnectionContext]>(["identity", "connection"]),

    /** Turn an MCP tool name into a Pi tool name. */
    toolName: new SyncWaterfallHook<[string, ToolNameContext]>(["name", "context"]),
    /**
     * Map one content block to Pi content, one hook per content type
     * (`mapContent.for("resource")`): the first mapper that answers wins, one
     * that answers undefined leaves the block to the next. The built-ins tap
     * at STAGE.BUILTIN; a third-party mapper taps before them to take the
     * blocks it knows.
     */
    mapContent: new HookMap(
      (type: string) =>
        new AsyncSeriesBailHook<[ContentBlock, ResultContext], PiContent[] | undefined>(["block", "context"], `mapContent:${type}`),
    ),
    /** Refine a whole mapped result after its blocks were mapped (structured content, a block no mapper took). */
    mapResult: new AsyncSeriesWaterfallHook<[MappedResult, ResultContext]>(["result", "context"]),
    /** Keep oversized output somewhere private; the first plugin that stores it answers. */
    spill: new AsyncSeriesBailHook<[SpillRequest], SpillResult | undefined>(["request"]),
    /** The system prompt suffix for this agent run: each tap may add its section. */
    systemPrompt: new SyncWaterfallHook<[string, SystemPromptContext]>(["prompt", "context"]),
    /** Suggest values for a prompt argument; the first plugin that answers wins (none: no suggestions). */
    complete: new AsyncSeriesBailHook<[CompletionRequest], readonly string[] | undefined>(["request"]),
    /** Extra lines for `/mcp status` (e.g. active subscriptions). */
    statusLines: new SyncWaterfallHook<[string[], HostContext]>(["lines", "host"]),
    /** Build and refine a tool row (TUI and HTML export): the observer fills it at STAGE.BUILTIN; later taps refine it. */
    render: new SyncWaterfallHook<[RenderModel, RenderContext]>(["model", "context"]),
  });
}

export type KernelHooks = ReturnType<typeof createHooks>;

/**
 * How long one tap may take, for the hooks every server or the session's end
 * waits for: no server starts before each `hostStart` tap has finished, and a
 * session ends only when each `hostShutdown` tap has. A tap still running at
 * its deadline fails its hook with an error naming the plugin and the hook
 * (PluginHookError), exactly as if it had thrown: the hook's caller takes the
 * failure path it already has for a tap that throws. Every built-in tap of
 * these hooks finishes in milliseconds; the deadlines are well above that and
 * below the 30 s a tool call waits for its server to be opened.
 */
export const HOOK_DEADLINES_MS: HookDeadlines = Object.freeze({ hostStart: 10_000, hostShutdown: 10_000 });

/** A deadline (ms) per hook; the taps of a hook without one may take as long as they take. */
export type HookDeadlines = Readonly<Partial<Record<HookName, number>>>;

/** What hosts use of a kernel: its hooks, and which plugins it applied (the Kernel class is the one implementation). */
export interface PluginKernel {
  readonly hooks: KernelHooks;
  has(pluginName: string): boolean;
}
export type HookName = keyof KernelHooks;
