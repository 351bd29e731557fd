import { inBackground } from "../kernel/async.ts";
import { PiMcpError } from "../kernel/errors.ts";
import type { PluginKernel } from "../kernel/hooks.ts";
import type { PluginHost, ResultPipeline } from "../kernel/host.ts";
import type { CallOptions, ToolOutcome } from "../kernel/services.ts";
import type { EffectiveConfig, Exposure, ServerEntry } from "../kernel/settings.ts";
import { DEFAULTS } from "../kernel/settings.ts";
import type { ConnectionStatus } from "../kernel/status.ts";
import type { CompletionRequest, HostContext, Redactor } from "../kernel/types.ts";
import { CatalogKeeper, type Handoff, type HostCatalogs } from "./catalog-keeper.ts";
import type { ServerConnection } from "./connection.ts";
import { ServerIdentities } from "./identities.ts";
import { ServerOrchestra } from "./orchestration.ts";
import { killQuietly, type ConnectionPool } from "./pool.ts";
import { HostResults } from "./results.ts";
import { ContextBudget, withBudget } from "./context-budget.ts";
import { ToolBridge, type ToolSink } from "./tool-bridge.ts";

export type { BridgedTool, ToolSink } from "./tool-bridge.ts";
export type { Handoff, HostCatalogs } from "./catalog-keeper.ts";

export interface HostEvents {
  statusChanged?(): void;
}

/**
 * One session's MCP host, as a lifecycle: it starts (`hostStart`, then every
 * enabled server in the background), adopts changed settings, and ends
 * (closing its connections, or leaving them and its catalogs to the next
 * session). Its parts: the servers at work (ServerOrchestra), Pi's tools
 * (ToolBridge), the catalogs offered and kept (CatalogKeeper) and what each
 * definition is, compared (ServerIdentities).
 */
export class McpHost<K extends PluginKernel = PluginKernel> implements PluginHost {
  /** The result pipeline plugins reach through this host (with its current context). */
  readonly results: ResultPipeline;
  private stopped = false;
  /** `hostStart`, fired once by the first start: servers connect only after every tap ran. */
  private started: Promise<void> | undefined;
  /** One object for the host's whole life (settings applied later change its fields): plugins key what they keep for the host by it. */
  private readonly contextValue: { -readonly [K in keyof HostContext]: HostContext[K] };
  /** The redactor of the newest settings: every holder of this host's context redacts with it. */
  private currentRedact: Redactor;
  /** What each server's definition is, compared (connections kept, pooled, catalogs recorded). */
  private readonly identities: ServerIdentities;
  /** Pi's tools: names, owners, what Pi was given, the Instruction Snapshot, the calls. */
  private readonly bridge: ToolBridge;
  /** Which catalog each server offers, and what is kept of them: preloaded, stale, saved, handed over. */
  private readonly keeper: CatalogKeeper;
  /** The servers at work: their connections, how each is opened, what their state changes set off. */
  private readonly servers: ServerOrchestra;

  constructor(
    private readonly kernel: K,
    context: HostContext,
    sink: ToolSink,
    events: HostEvents = {},
    /** Where connections wait between sessions of one process; without it nothing is reused. */
    private readonly pool?: ConnectionPool,
    /** Persisted catalogs (Pi only); without them nothing is preloaded or recorded. */
    catalogs?: HostCatalogs,
    /** Decides the exposure of `auto` tools (the context budget); Pi's entry tells it the model's window and the runs. */
    readonly budget: ContextBudget = new ContextBudget(),
  ) {
    this.currentRedact = context.redact;
    // Connections and plugins keep the context they were given; settings applied later still reach
    // their redaction (a log file rewritten after `add` hides the new server's secrets too).
    const redact = Object.defineProperties((text: string) => this.currentRedact(text), {
      secrets: { get: () => this.currentRedact.secrets },
      reach: { get: () => this.currentRedact.reach },
      forms: { get: () => this.currentRedact.forms },
    }) as Redactor;
    this.contextValue = { ...context, redact };
    this.results = new HostResults(kernel, () => this.contextValue);
    this.identities = new ServerIdentities(kernel, () => this.contextValue);
    this.bridge = new ToolBridge(
      kernel,
      sink,
      {
        config: () => this.config,
        results: this.results,
        server: (name) => this.servers.get(name),
        released: () => this.stopped,
        opened: (name, signal) => this.servers.opened(name, signal),
        stale: (name) => this.keeper.isStale(name),
      },
      budget,
    );
    this.keeper = new CatalogKeeper(
      {
        context: () => this.contextValue,
        server: (name) => this.servers.get(name),
        systemPrompt: (base) => this.systemPrompt(base),
        report: (what, error) => this.servers.reportToAll(what, error),
      },
      this.identities,
      this.bridge,
      pool,
      catalogs,
    );
    this.servers = new ServerOrchestra(
      {
        kernel,
        context: () => this.contextValue,
        started: () => this.started !== undefined,
        released: () => this.stopped,
        statusChanged: () => events.statusChanged?.(),
      },
      this.identities,
      this.bridge,
      this.keeper,
      pool,
    );
    // The tools the Pi entry registered at load become this host's (whether each server's catalog is still its own is checked at start).
    this.bridge.preload(this.keeper.preloadedServers(), this.keeper.offered());
  }

  get context(): HostContext {
    return this.contextValue;
  }

  get config(): EffectiveConfig {
    return this.contextValue.config;
  }

  get kernelInstance(): K {
    return this.kernel;
  }

  /**
   * Starts the host: the first call fires `hostStart` (plugins set up what
   * they keep for this host), then every enabled server not yet started
   * connects in the background. Resolves once `hostStart` has run; a tap
   * that fails rejects it, and then no server starts.
   */
  start(): Promise<void> {
    const started = this.fireHostStart();
    this.adoptPreloaded();
    if (!this.config.valid) return started;
    for (const entry of this.config.servers) {
      if (entry.masked || this.servers.has(entry.name)) continue;
      this.servers.openAfter(entry.name, started, () => this.unmaskedEntry(entry.name));
    }
    return started;
  }

  /** Starts the host and waits for every enabled server's first attempt to settle (the CLI's `test`). */
  async startAndSettle(): Promise<void> {
    await this.fireHostStart();
    if (!this.config.valid) return;
    const fresh = this.config.servers.filter((entry) => !entry.masked && !this.servers.has(entry.name));
    await Promise.all(fresh.map((entry) => this.servers.open(entry)));
  }

  private fireHostStart(): Promise<void> {
    this.started ??= this.kernel.hooks.hostStart.promise(this);
    return this.started;
  }

  /** Server `name`'s definition in the settings now, unless it is masked (or the settings are invalid). */
  private unmaskedEntry(name: string): ServerEntry | undefined {
    return this.config.valid ? this.config.servers.find((candidate) => candidate.name === name && !candidate.masked) : undefined;
  }

  /**
   * Drops every preloaded catalog that is no longer its server's (see
   * CatalogKeeper.verify): their tools are withdrawn at once, before any
   * server connects; a call of one fails saying why. The sink adopts the rest.
   */
  private adoptPreloaded(): void {
    const kept = this.keeper.verify();
    if (kept === undefined) return;
    this.bridge.adopt(kept);
    inBackground(
      () => this.servers.sync(),
      (error) => this.servers.reportToAll("offering the tools to Pi", error),
    );
  }

  /**
   * Adopts changed settings: servers whose definition changed, or that were
   * disabled or removed, are closed; new and changed ones connect in the
   * background. Untouched servers keep their connections.
   */
  async applyConfig(config: EffectiveConfig, redact: HostContext["redact"]): Promise<void> {
    const before = new Map(this.config.servers.map((entry) => [entry.name, this.identities.connection(entry)]));
    this.currentRedact = redact;
    this.contextValue.config = config;
    const after = new Map(config.valid ? config.servers.filter((entry) => !entry.masked).map((entry) => [entry.name, entry]) : []);
    for (const [name, connection] of this.servers.entries()) {
      const entry = after.get(name);
      if (entry && before.get(name) === this.identities.connection(entry)) {
        connection.update(this.context, entry); // new root folders are announced, not reconnected
        continue;
      }
      this.servers.remove(name);
      await connection.close();
    }
    this.servers.syncSoon();
    inBackground(
      () => this.start(),
      (error) => this.servers.reportToAll("starting the host", error),
    );
  }

  /** A configured server (a disabled one too, in state `disabled`; not a masked one), as plugins see it. */
  server(name: string): ServerConnection | undefined {
    return this.servers.get(name);
  }

  async complete(request: CompletionRequest): Promise<readonly string[]> {
    return (await this.kernel.hooks.complete.promise(request)) ?? [];
  }

  /** Every connection's status, with its place in the context budget while its catalog is offered. */
  status(): ConnectionStatus[] {
    const plan = this.budget.current;
    const offered = new Map(this.keeper.offered().map((item) => [item.entry.name, item]));
    return this.servers.all().map((connection) => {
      const item = offered.get(connection.name);
      return withBudget(
        connection.status(),
        plan,
        item?.entry,
        (item?.catalog ?? []).map(({ tool }) => tool),
      );
    });
  }

  /** The active model changed (its context window decides the budget): the tools are decided anew, at once (the next request may follow at once). */
  modelChanged(window: number | undefined): void {
    if (this.budget.setWindow(window)) this.syncNow();
  }

  /** Resolves once the tool syncs started so far have run: the budget's decisions are those of the latest settings, catalogs and model. */
  toolsSynced(): Promise<void> {
    return this.bridge.syncsDone();
  }

  /** An agent run ended: what its held decisions kept back is decided now (the next prompt may follow at once). */
  runEnded(): void {
    this.budget.release();
    this.syncNow();
  }

  private syncNow(): void {
    inBackground(
      () => this.servers.sync(),
      (error) => this.servers.reportToAll("offering the tools to Pi", error),
    );
  }

  /** The tools this host offers Pi with their exposures, in the canonical order (ToolBridge.offeredTools). */
  offeredTools(): [string, Exposure][] {
    return this.bridge.offeredTools(this.keeper.offered());
  }

  async reconnect(name: string): Promise<void> {
    const connection = this.servers.get(name);
    if (!connection) throw new PiMcpError("not_found", `no server "${name}" in this session`);
    await connection.close();
    await connection.start();
  }

  /** Waits until no server is still connecting or retrying and their tools have reached Pi, within `timeoutMs` (see ServerOrchestra.settled). */
  settled(timeoutMs: number): Promise<boolean> {
    return this.servers.settled(timeoutMs);
  }

  /** Waits until the catalog changes announced so far have reached Pi, within `timeoutMs` (see ServerOrchestra.flushTools). */
  flushTools(timeoutMs = Number.POSITIVE_INFINITY): Promise<boolean> {
    return this.servers.flushTools(timeoutMs);
  }

  /** Whether a catalog of server `name` is offered to Pi now: its live one, or one it keeps or was given at load (see CatalogKeeper.offered). */
  offersCatalog(name: string): boolean {
    return this.keeper.offered().some(({ entry }) => entry.name === name);
  }

  /**
   * The system prompt with this host's additions (the Instruction Snapshot):
   * synchronous, from what the last catalog sync delivered, never waiting for
   * a connection.
   */
  systemPrompt(base: string): string {
    return this.kernel.hooks.systemPrompt.call(base, { host: this.context, servers: this.bridge.instructionServers });
  }

  /** Lines features add to `/mcp status`. */
  statusLines(): string[] {
    return this.kernel.hooks.statusLines.call([], this.context);
  }

  /** One call of a server tool, by its Pi name (see ToolBridge.call). */
  callTool(name: string, args: Record<string, unknown>, options: CallOptions): Promise<ToolOutcome> {
    return this.bridge.call(name, args, options);
  }

  /**
   * Ends the host. When Pi replaces the session (`reload`, `new`, `resume`,
   * `fork`), live connections wait in the pool for the next session; on quit,
   * and for anything not reusable, connections close within the budget.
   */
  async shutdown(budgetMs: number = DEFAULTS.shutdownBudgetMs, reason: "quit" | "replaced" = "quit", handoff: Handoff = {}): Promise<void> {
    // A change not recorded yet is recorded now (a server that connected just before Pi quits is known next time).
    await this.keeper.flush();
    if (reason === "replaced") this.keeper.handOver(handoff);
    this.stopped = true;
    this.servers.stopSyncing();
    if (reason === "replaced" && this.pool) {
      const settings = handoff.settings ?? this.config;
      for (const [name, connection] of this.servers.entries()) {
        // Decided now, from the settings and credentials as they are: anything else closes below, within the budget.
        const key = this.identities.retainKey(connection, settings);
        if (key === undefined) continue;
        this.servers.remove(name);
        this.pool.retain(key, connection);
      }
    }
    const connections = this.servers.all();
    // Remember the children now (pooled ones too, on quit): close() forgets them, and a stubborn one must still be killed.
    const pids = [...connections.map((connection) => connection.processId), ...(reason === "quit" ? (this.pool?.pids() ?? []) : [])].filter(
      (pid): pid is number => pid !== undefined,
    );
    // On quit, retained connections close within the same budget.
    const closing = Promise.all([
      ...connections.map((connection) => connection.close()),
      ...(reason === "quit" && this.pool ? [this.pool.drain()] : []),
    ]);
    let timer: NodeJS.Timeout | undefined;
    const inTime = await Promise.race([
      closing.then(() => true),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), budgetMs))),
    ]);
    clearTimeout(timer);
    if (!inTime) for (const pid of pids) killQuietly(pid);
    await this.kernel.hooks.hostShutdown.promise(this);
  }
}
