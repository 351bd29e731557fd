import { writeSync } from "node:fs";
import {
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_LINES,
  truncateHead,
  type ExtensionAPI,
  type ExtensionCommandContext,
  type ExtensionContext,
} from "@earendil-works/pi-coding-agent";
import { parseArgsStringToArgv } from "string-argv";
import { helpCommand, runCommandLine } from "../commands/index.ts";
import type { CommandEnvironment, CommandResult, CommandSpec, RuntimeControl } from "../kernel/commands.ts";
import { createKernel, credentialQueries, surfaceCommands, type KernelOptions } from "../composition.ts";
import { loadConfig } from "../config/load.ts";
import { agentDir } from "../config/paths.ts";
import { savedProjectTrust } from "../config/trust.ts";
import type { EffectiveConfig } from "../kernel/settings.ts";
import { importNotice } from "../import/notice.ts";
import type { SessionObserver } from "../kernel/pi-part.ts";
import type { Redactor, Truncator } from "../kernel/types.ts";
import { McpHost, type HostCatalogs } from "../runtime/host.ts";
import { processPool } from "../runtime/pool.ts";
import { cacheEnabled, type CachedStart } from "../runtime/catalog-cache.ts";
import { CatalogStore } from "../runtime/catalog-store.ts";
import { firstRequestBound, settingsDigest } from "../config/settings-stamp.ts";
import type { CallOptions, ToolOutcome } from "../kernel/services.ts";
import { processSessionFolders, type SessionFolder } from "../runtime/session-folders.ts";
import { captureSdkConsole } from "../safety/sdk-output.ts";
import { Changes, settlesWithin } from "../kernel/async.ts";
import { sessionEnded } from "../kernel/errors.ts";
import { longestFirstRequestWait, waitForFirstRequest } from "../runtime/first-request.ts";
import { createRedactor } from "../safety/text.ts";
import { completeArgumentsLive } from "./completion.ts";
import type { EarlierRenderers } from "./earlier-rows.ts";
import { piServices } from "./services.ts";
import { effectiveExposure, piToolSink, supportsExposure, type PiToolSink } from "./tools.ts";
import { ContextBudget } from "../runtime/context-budget.ts";
import { keepToolOrder, offeredToolsOf } from "./tool-order.ts";
import { runsWithoutTerminal } from "./first-request.ts";

/**
 * Print mode has no UI (notify goes nowhere) and Pi moves console output to
 * stderr, so there the result is written straight to the process's own
 * stdout/stderr, and a failure sets the exit code. Elsewhere it is a notice.
 */
function showResult(ctx: ExtensionContext, result: CommandResult): void {
  if (ctx.mode === "print") {
    writeSync(result.exitCode === 0 ? 1 : 2, `${result.output}\n`);
    if (result.exitCode !== 0) process.exitCode = result.exitCode;
    return;
  }
  ctx.ui.notify(result.output, result.exitCode === 0 ? "info" : "error");
}

/** Pi's own limits for model-facing text; a single over-long line is cut by bytes. */
const piTruncate: Truncator = (text) => {
  const cut = truncateHead(text, { maxLines: DEFAULT_MAX_LINES, maxBytes: DEFAULT_MAX_BYTES });
  if (!cut.truncated) return { text, truncated: false };
  const head =
    cut.content ||
    Buffer.from(text, "utf8")
      .subarray(0, DEFAULT_MAX_BYTES)
      .toString("utf8")
      .replace(/\uFFFD$/, "");
  return { text: head, truncated: true };
};

/** The kernel options with the settings' `mcp.features` (switched-off feature plugins are left out). */
function withFeatures(options: KernelOptions, settings: EffectiveConfig | undefined): KernelOptions {
  return settings ? { ...options, features: settings.features } : options;
}

/**
 * The settings stamp of a session's settings, read around loading them: when
 * the files changed meanwhile there is none (what is recorded must belong to
 * exactly the settings the host runs with).
 */
async function loadStamped(
  ctx: ExtensionContext,
  load: () => Promise<EffectiveConfig>,
): Promise<{ config: EffectiveConfig; stamp: string | undefined }> {
  const stamp = () => settingsDigest({ agentDir: agentDir(), cwd: ctx.cwd, trusted: ctx.isProjectTrusted(), env: process.env });
  const before = stamp();
  const config = await load();
  return { config, stamp: stamp() === before ? before : undefined };
}

/** Pi's `/mcp` command as the core registers it. */
export type McpCommand = Parameters<ExtensionAPI["registerCommand"]>[1];

/** What the Pi entry hands the core (all optional: a core registered directly starts fresh). */
export interface CoreOptions {
  /** The kernel's options (tests: another set of plugins). */
  readonly kernelOptions?: KernelOptions;
  /**
   * The catalogs the Pi entry registered tools from while Pi loaded it
   * (persisted ones, or those a replaced session handed over); the host
   * takes them over and reconciles them with the live servers.
   */
  readonly known?: CachedStart | undefined;
  /** An agent start already ran before the core was loaded (so none of this session waits any more). */
  readonly agentStarted?: boolean;
  /** Told of every tool the core registers with Pi (rows the entry drew before it look for the tool's renderers again). */
  readonly toolRegistered?: () => void;
}

/**
 * One session's MCP host and everything that lives and ends with it: made at
 * session_start, let go at session_shutdown (a session Pi replaces hands its
 * connections to the next one through the process pool). Its fields are set
 * as the host starts, in this order.
 */
class SessionHost {
  /** The settings stamp of the host's settings (undefined: unknown, nothing is recorded). */
  stamp: string | undefined;
  /** The session's private folder, held while the session lives. */
  folder: SessionFolder | undefined;
  /** Where the host registers its tools with Pi (in time slices). */
  toolSink: PiToolSink | undefined;
  /** What plugins' Pi parts follow of the session (the MCP Observer UI's footer and notices). */
  observers: SessionObserver[] = [];
  /** The started host, for synchronous work (the system prompt, redaction); commands wait for `ready`. */
  host: McpHost | undefined;
  /** The host once started (one event-loop turn after session_start, so Pi's start never waits for MCP work); rejects when it failed to start. */
  readonly ready: Promise<McpHost>;

  constructor(start: (session: SessionHost) => Promise<McpHost>) {
    this.ready = new Promise((resolve) => setTimeout(resolve, 0)).then(() => start(this));
  }

  updateObservers(): void {
    for (const observer of this.observers) observer.update();
  }
}

/**
 * The Pi side of pi-mcp, for one load of the extension (Pi loads it again for
 * every session it starts): the `/mcp` command (registering it makes Pi
 * 0.99.1+ skip its built-in MCP extension), and at session start a host that
 * connects the configured servers in the background and offers their tools
 * to the model. Pi's events reach it through its methods (`registerPiMcp`
 * wires them, or the Pi entry forwards them once it loaded the core).
 * What lasts as long as the load is fixed at construction; what lasts a
 * session is its SessionHost; what changes meanwhile is the five fields below.
 */
export class PiMcpCore {
  /** How rows of pi-mcp tools that are not registered (drawn before a `/reload`) are drawn, once the plugins' Pi parts loaded. */
  readonly earlierRows: Promise<EarlierRenderers>;
  readonly command: McpCommand;

  /** The session's host, from session_start until session_shutdown. */
  private session: SessionHost | undefined;
  /** The settings last loaded (by the host's start or by a command): server names for completion, the first request's bound. */
  private config: EffectiveConfig | undefined;
  /** The commands of this session: its features' (once the host started, those of the features its settings keep). */
  private surface: CommandSpec[];
  /** The first agent start's wait while it lasts; "done" once it ended or was not needed (later agent starts never wait). */
  private firstStart: Promise<void> | "done" | undefined;
  /** session_shutdown ran: nothing is waited for any more. */
  private ended = false;

  private readonly pi: ExtensionAPI;
  private readonly kernelOptions: KernelOptions;
  private readonly known: CachedStart | undefined;
  private readonly toolRegistered: (() => void) | undefined;
  private readonly caching = cacheEnabled();
  private readonly sessionFolders = processSessionFolders();
  private readonly branchListeners = new Set<() => void>();
  /** Woken when the settings are loaded, the host has started (or failed to), a connection's state changes, and the session ends. */
  private readonly changes = new Changes();

  constructor(pi: ExtensionAPI, options: CoreOptions = {}) {
    this.pi = pi;
    captureSdkConsole(); // the SDK's console output never reaches Pi's terminal (see src/safety/sdk-output.ts)
    this.kernelOptions = options.kernelOptions ?? {};
    this.known = options.known;
    this.toolRegistered = options.toolRegistered;
    this.firstStart = options.agentStarted ? "done" : undefined;
    // Feature plugins own some commands; a kernel built now lists them (hosts build their own).
    const featureKernel = createKernel(this.kernelOptions);
    this.surface = surfaceCommands("pi", featureKernel);
    const redactor = () => this.session?.host?.context.redact ?? createRedactor(this.config?.secrets ?? []);
    const featureParts = featureKernel.piParts();
    featureParts
      .then((parts) => {
        for (const part of parts) part.register?.(pi, redactor);
      })
      .catch((error: unknown) => process.stderr.write(`pi-mcp: a plugin's Pi part failed to load: ${String(error)}\n`));
    // A tool registered from a known catalog is drawn as the server tool it is (its server and MCP name are known).
    const knownTools = new Map(
      this.known?.servers.flatMap((server) =>
        server.tools.map((tool) => [tool.piName, { server: server.name, tool: tool.tool.name }] as const),
      ) ?? [],
    );
    this.earlierRows = featureParts.then((parts): EarlierRenderers => {
      const rendering = parts.find((part) => part.toolRendering)?.toolRendering?.(featureKernel, redactor);
      return (piName) => {
        const tool = knownTools.get(piName);
        return tool ? rendering?.serverTool(tool.server, tool.tool, piName) : rendering?.earlierTool(piName);
      };
    });
    this.command = {
      description: "Manage MCP servers (pi-mcp): /mcp help",
      getArgumentCompletions: (prefix) =>
        completeArgumentsLive(prefix, this.commands(), this.config?.servers.map((server) => server.name) ?? [], () => this.session?.ready),
      handler: async (args: string, ctx: ExtensionCommandContext) => {
        const argv = parseArgsStringToArgv(args);
        const result = await runCommandLine(this.commands(), argv.length > 0 ? argv : ["help"], this.environment(ctx));
        showResult(ctx, result);
      },
    };
  }

  sessionStart(ctx: ExtensionContext): void {
    if (this.session) return; // RPC mode can announce one session twice
    const session = new SessionHost((starting) => this.startHost(starting, ctx));
    this.session = session;
    session.ready.catch(() => this.changes.notify()); // a host that failed to start is not waited for
  }

  /**
   * The Instruction Snapshot for the agent start, built synchronously from what has already synced, never waiting for a server;
   * before the host has started, the known catalogs' (those Pi was given at load). The first agent start of a run without a
   * terminal UI takes it after its bounded wait for servers (see firstAgentStart).
   */
  beforeAgentStart(event: { systemPrompt: string }, ctx: ExtensionContext): Snapshot | Promise<Snapshot> {
    const waiting = this.firstAgentStart(ctx, Date.now());
    return waiting ? waiting.then(() => this.runStart(ctx, event.systemPrompt)) : this.runStart(ctx, event.systemPrompt);
  }

  /**
   * Each agent run starts with the context budget's decisions held (src/runtime/context-budget.ts) and the
   * tools in their canonical order (src/pi/tool-order.ts): the same catalogs give the same declarations.
   */
  private async runStart(ctx: ExtensionContext, systemPrompt: string): Promise<Snapshot> {
    const host = this.session?.host;
    if (host) {
      host.modelChanged(ctx.model?.contextWindow);
      // The syncs a model switch or the last run's end started decide first (a sync runs in turns): then the re-decision is known.
      await host.toolsSynced();
      // A re-decision (a model switch, a catalog change) reaches Pi before the run's first request: its registrations run in slices.
      if (host.budget.redecided) await this.session?.toolSink?.idle();
      // A big catalog still registering is activated when it has all registered; the run's requests carry what is there now.
      this.session?.toolSink?.activateRegistered();
      host.budget.hold();
      const supported = supportsExposure(this.pi);
      keepToolOrder(
        this.pi,
        offeredToolsOf(host.offeredTools().map(([name, exposure]) => [name, effectiveExposure(exposure, supported)] as const)),
      );
    }
    return this.snapshot(systemPrompt);
  }

  /** The active model changed: its context window decides the budget. */
  modelSelect(event: { model: { contextWindow: number } }): void {
    this.session?.host?.modelChanged(event.model.contextWindow);
  }

  /** An agent run ended: the budget's held decisions are released. */
  agentEnd(): void {
    this.session?.host?.runEnded();
  }

  sessionTree(): void {
    for (const listener of this.branchListeners) listener();
  }

  async sessionShutdown(event: { reason: string }, ctx: ExtensionContext): Promise<void> {
    this.ended = true;
    this.changes.notify();
    const session = this.session;
    this.session = undefined;
    if (session) await this.endSession(session, event.reason === "quit", ctx);
    // After the host finished its files: a run without a saved session removes its folder when it ends.
    await this.sessionFolders.ended(session?.folder, event.reason === "quit");
  }

  /** Runs a call of a tool the Pi entry registered from a known catalog (it waits for this session's host). */
  async callTool(piName: string, args: Record<string, unknown>, options: CallOptions): Promise<ToolOutcome> {
    const ready = this.session?.ready;
    if (!ready) throw sessionEnded(piName);
    return (await ready).callTool(piName, args, options);
  }

  /**
   * The session's first agent start, begun at `since` (`Date.now()`): in a
   * run without a terminal UI, waits (bounded) for the servers whose tools
   * the first model request should carry (src/runtime/first-request.ts);
   * at once otherwise, and at every later agent start.
   */
  firstAgentStart(ctx: ExtensionContext, since: number): Promise<void> | undefined {
    if (this.firstStart === "done") return undefined;
    if (this.firstStart) return this.firstStart;
    if (!runsWithoutTerminal(ctx)) {
      this.firstStart = "done";
      return undefined;
    }
    const waiting = this.firstRequestWait(since, ctx)
      .catch((error: unknown) => {
        process.stderr.write(`pi-mcp: waiting for the servers of the first request failed: ${String(error)}\n`);
      })
      .finally(() => {
        this.firstStart = "done";
        // What is registered by now is in the request, even where its activation was not due yet (a big catalog).
        if (!this.ended) this.session?.toolSink?.activateRegistered();
      });
    this.firstStart = waiting;
    return waiting;
  }

  private commands(): CommandSpec[] {
    return [...this.surface, helpCommand(() => this.commands())];
  }

  private snapshot(base: string): Snapshot {
    const host = this.session?.host;
    const systemPrompt = host ? host.systemPrompt(base) : base + (this.known?.prompt ?? "");
    return systemPrompt === base ? undefined : { systemPrompt };
  }

  private environment(ctx: ExtensionContext): CommandEnvironment {
    const agent = agentDir();
    const projectTrusted = ctx.isProjectTrusted();
    const session = this.session;
    return {
      surface: "pi",
      agentDir: agent,
      cwd: ctx.cwd,
      env: process.env,
      projectTrusted,
      savedTrust: savedProjectTrust(agent, ctx.cwd),
      credentials: credentialQueries(agent),
      progress: (text) => (ctx.mode === "print" ? void writeSync(1, `${text}\n`) : ctx.ui.notify(text, "info")),
      createKernel: async (settings) => createKernel(withFeatures(this.kernelOptions, settings)),
      loadConfig: async () => (this.config = await loadConfig({ agentDir: agent, cwd: ctx.cwd, projectTrusted, env: process.env })),
      ...(session && { runtime: this.runtimeControl(session, ctx) }),
    };
  }

  /** Commands may run before the background start finished: each waits for the host. */
  private runtimeControl(session: SessionHost, ctx: ExtensionContext): RuntimeControl {
    const { ready } = session;
    return {
      status: async () => {
        const current = await ready;
        return { config: current.config, servers: current.status(), extra: current.statusLines() };
      },
      reconnect: async (name) => (await ready).reconnect(name),
      host: () => ready,
      settled: async (timeoutMs) => (await ready).settled(timeoutMs),
      // The setting is already persisted; a failed connection never rolls it back.
      settingsChanged: async () => {
        const loaded = await loadStamped(ctx, () => this.environment(ctx).loadConfig());
        session.stamp = loaded.stamp;
        await (await ready).applyConfig(loaded.config, createRedactor(loaded.config.secrets));
        session.updateObservers();
      },
    };
  }

  private async startHost(session: SessionHost, ctx: ExtensionContext): Promise<McpHost> {
    const stamped = await loadStamped(ctx, () => this.environment(ctx).loadConfig());
    const loaded = stamped.config;
    session.stamp = stamped.stamp;
    this.changes.notify(); // the first agent start's wait knows its bound now
    const agent = agentDir();
    await importNotice(ctx, agent, loaded); // servers only Pi's built-in mcp.json names: one notice per change, never connected
    // Held while the session lives: no sweep (of this Pi or another) removes it meanwhile.
    session.folder = await this.sessionFolders.claim(agent, ctx.sessionManager.getSessionId(), ctx.sessionManager.getSessionFile());
    const kernel = createKernel(withFeatures(this.kernelOptions, loaded));
    // The session's commands are its features' (a feature switched off in the settings takes its commands along).
    this.surface = surfaceCommands("pi", kernel);
    const parts = await kernel.piParts();
    const redact = (): Redactor => session.host?.context.redact ?? context.redact;
    const rendering = parts.find((part) => part.toolRendering)?.toolRendering?.(kernel, redact);
    const context = {
      cwd: ctx.cwd,
      agentDir: agent,
      privateDir: session.folder.path,
      config: loaded,
      redact: createRedactor(loaded.secrets),
      truncate: piTruncate,
      services: piServices(this.pi, ctx, this.branchListeners, rendering, this.toolRegistered),
    };
    const notice = (text: string) => (ctx.hasUI ? ctx.ui.notify(text, "warning") : writeSync(2, `pi-mcp: ${text}\n`));
    const store = new CatalogStore(agent);
    const known = this.known;
    const catalogs: HostCatalogs | undefined = this.caching
      ? { ...(known && { preloaded: known }), stamp: () => session.stamp, save: (snapshot) => store.save(snapshot) }
      : undefined;
    session.toolSink = piToolSink(this.pi, notice, rendering, this.toolRegistered);
    const statusChanged = () => {
      this.changes.notify();
      session.updateObservers();
    };
    const budget = new ContextBudget({ window: ctx.model?.contextWindow, exposureSupported: supportsExposure(this.pi), notice });
    const host = new McpHost(kernel, context, session.toolSink, { statusChanged }, processPool(), catalogs, budget);
    session.observers = parts.flatMap((part) => (part.observeSession ? [part.observeSession(ctx, host)] : []));
    await host.start();
    session.host = host;
    this.changes.notify();
    session.updateObservers();
    this.sessionFolders.sweepWhenDue(agent); // old session folders go in the background, at most once a day
    return host;
  }

  /** Lets the session's host go: closed when Pi quits, else its live connections are handed to the next session. */
  private async endSession(session: SessionHost, quit: boolean, ctx: ExtensionContext): Promise<void> {
    session.toolSink?.close(); // registrations still queued belong to this session, whose Pi API goes now
    for (const observer of session.observers) observer.stop();
    session.observers = [];
    const current = await session.ready.catch(() => undefined);
    session.toolSink?.close(); // a host that was still starting has its sink now
    session.toolSink = undefined;
    if (current && quit) await current.shutdown(undefined, "quit");
    else if (current) {
      // Replaced sessions (/reload, /new, /resume, /fork) hand their live connections to the next one, but only
      // those whose definition is still the one in settings.json now (re-read: it may have changed since the session started).
      const settings = await loadStamped(ctx, () => this.environment(ctx).loadConfig()).catch(() => undefined);
      await current.shutdown(undefined, "replaced", {
        ...(settings && { settings: settings.config }),
        ...(settings?.stamp !== undefined && { stamp: settings.stamp }),
      });
    }
  }

  /**
   * The first agent start of a run without a terminal UI: waits until the
   * host has started (the core and the settings loaded, the servers started),
   * for at most connectTimeoutMs from `since`; then for the servers whose
   * tools the first request should carry, each for at most its
   * firstRequestWaitMs from `since` or, when the host started later (a first
   * start loads the core first), from when the host started them: pi-mcp's
   * own start-up does not use up the servers' time. Until the settings are
   * loaded, the bounds are what the raw settings files allow.
   */
  private async firstRequestWait(since: number, ctx: ExtensionContext): Promise<void> {
    const written = firstRequestBound(agentDir(), ctx.cwd);
    const startUp = () => (!this.config ? written.startUp : longestFirstRequestWait(this.config) > 0 ? this.config.connectTimeoutMs : 0);
    const over = () => this.ended || Date.now() >= since + startUp();
    while (!this.session?.host && !over() && this.session) {
      const { ready } = this.session;
      const failed = await Promise.race([
        ready.then(
          () => false,
          () => true,
        ),
        this.changes.next(since + startUp() - Date.now()).then(() => false),
      ]);
      if (failed) return;
    }
    const host = this.session?.host;
    if (!host || over()) return;
    // Woken by the host's start (or already started before the agent start): the servers' time counts from now.
    const serversSince = Date.now();
    const credentials = credentialQueries(agentDir());
    await waitForFirstRequest(host, {
      since: serversSince,
      changes: this.changes,
      ended: () => this.ended || this.session?.host !== host,
      // Explicit OAuth without stored credentials: it cannot connect before an `auth`.
      needsAuthorization: async ({ name, definition }) =>
        definition?.transport !== "stdio" && definition?.auth?.type === "oauth" && !(await credentials.has(name, definition)),
    });
    // A big catalog reaches Pi in time slices: the first request waits for them too, within the same bound.
    const sink = this.session?.toolSink;
    if (sink && !this.ended)
      await settlesWithin(sink.idle(), serversSince + longestFirstRequestWait(host.config) - Date.now(), () => undefined);
  }
}

/** What the agent start's system prompt becomes (undefined: unchanged). */
type Snapshot = { systemPrompt: string } | undefined;

/** Registers a core with Pi directly: its command and its handlers of Pi's events (the Pi entry forwards them itself). */
export function registerPiMcp(pi: ExtensionAPI, options: CoreOptions = {}): PiMcpCore {
  const core = new PiMcpCore(pi, options);
  pi.registerCommand("mcp", core.command);
  pi.on("session_start", (_event, ctx) => core.sessionStart(ctx));
  pi.on("before_agent_start", (event, ctx) => core.beforeAgentStart(event, ctx));
  pi.on("session_tree", () => core.sessionTree());
  pi.on("session_shutdown", (event, ctx) => core.sessionShutdown(event, ctx));
  pi.on("model_select", (event) => core.modelSelect(event));
  pi.on("agent_end", () => core.agentEnd());
  return core;
}
