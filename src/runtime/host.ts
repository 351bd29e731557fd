import type { Tool } from "@modelcontextprotocol/client";
import type { EffectiveConfig } from "../kernel/settings.ts";
import { DEFAULTS } from "../kernel/settings.ts";
import type { PluginKernel } from "../kernel/hooks.ts";
import type { PluginHost, ResultPipeline } from "../kernel/host.ts";
import type { CompletionRequest, ConnectionContext, HostContext, Redactor, SystemPromptContext } from "../kernel/types.ts";
import { withoutRootFolders } from "../config/roots.ts";
import { Changes, inBackground } from "../kernel/async.ts";
import { coalesce } from "./coalesce.ts";
import { CATALOG_COALESCE_MS, ServerConnection, authIdentityOf, type ConnectionEvents } from "./connection.ts";
import type { ConnectionStatus } from "../kernel/status.ts";
import { canonicalPath } from "../config/paths.ts";
import type { Exposure, ServerEntry } from "../kernel/settings.ts";
import { exposureOf } from "./exposure.ts";
import type { CallOptions, ToolOutcome } from "../kernel/services.ts";
import { killQuietly, poolKey, type ConnectionPool } from "./pool.ts";
import { RetainedLog } from "./retained-log.ts";
import { LazySchemas } from "./schemas.ts";
import { callServerTool } from "./tool-call.ts";
import { HostResults } from "./results.ts";
import { TOOL_NAME_PATTERN } from "../kernel/limits.ts";

/** A server tool as Pi should see it. */
export interface BridgedTool {
  readonly name: string;
  readonly server: string;
  readonly tool: Tool;
  /** How the model reaches it (settings: `exposure`, `toolExposure`). */
  readonly exposure: Exposure;
  execute(args: Record<string, unknown>, options: CallOptions): Promise<ToolOutcome>;
}

/** Where the host puts tools: Pi's tool registry, or nothing for the CLI. */
export interface ToolSink {
  /** New or changed tools. */
  register(tools: readonly BridgedTool[]): void;
  /** Tools whose server no longer offers them (Pi cannot unregister; they are deactivated). */
  deactivate(names: readonly string[]): void;
}

/** What a replaced session knows at handoff. */
export interface Handoff {
  /** The settings as they are now (re-read by the caller): a connection whose definition changed is closed, not retained. */
  readonly settings?: EffectiveConfig;
}

export interface HostEvents {
  statusChanged?(): void;
}

/**
 * One session's MCP host: a connection per enabled server, started in the
 * background, and a bridge that turns each server's tools into Pi tools.
 */
export class McpHost<K extends PluginKernel = PluginKernel> implements PluginHost {
  private readonly connections = new Map<string, ServerConnection>();
  private readonly schemas = new LazySchemas();
  /** `server\0tool` → Pi tool name, kept for the session (Pi cannot rename a tool). */
  private readonly names = new Map<string, string>();
  /** Pi tool name → the `server\0tool` it belongs to. */
  private readonly owners = new Map<string, string>();
  /** Tools left out for their name, logged once each. */
  private readonly unnamed = new Set<string>();
  /** Pi tool name → the JSON of the definition registered under it. */
  private readonly registered = new Map<string, string>();
  private readonly active = new Set<string>();
  /**
   * What the servers whose catalog reached Pi at the last sync contribute to
   * the Instruction Snapshot, as it was then: a connection that drops, or a
   * catalog that changes, changes the snapshot only with the next sync.
   */
  private synced: SystemPromptContext["servers"] = [];
  private readonly syncTools = coalesce(CATALOG_COALESCE_MS, () => this.bridgeTools(), (error) => this.reportToAll("offering the tools to Pi", error));
  /** Woken at every change of a connection's state (what `settled` waits on). */
  private readonly stateChanges = new Changes();
  /** The result pipeline plugins reach through this host (with its current context). */
  readonly results: ResultPipeline;
  private stopped = false;
  /** `hostStart`, fired once by the first start: servers connect only after every tap ran. */
  private started: Promise<void> | undefined;
  /** Servers whose start waits for `hostStart`. */
  private readonly opening = new Set<string>();
  /** One object for the host's whole life (settings applied later change its fields): plugins key what they keep for the host by it. */
  private readonly contextValue: { -readonly [K in keyof HostContext]: HostContext[K] };
  /** The redactor of the newest settings: every holder of this host's context redacts with it. */
  private currentRedact: Redactor;

  constructor(
    private readonly kernel: K,
    context: HostContext,
    private readonly sink: ToolSink,
    private readonly events: HostEvents = {},
    /** Where connections wait between sessions of one process; without it nothing is reused. */
    private readonly pool?: ConnectionPool,
  ) {
    this.currentRedact = context.redact;
    // Connections and plugins keep the context they were given; settings applied later still reach
    // their redaction (a log file rewritten after `add` hides the new server's secrets too).
    const redact = Object.defineProperties((text: string) => this.currentRedact(text), {
      secrets: { get: () => this.currentRedact.secrets },
      reach: { get: () => this.currentRedact.reach },
    }) as Redactor;
    this.contextValue = { ...context, redact };
    this.results = new HostResults(kernel, () => this.contextValue);
  }

  get context(): HostContext {
    return this.contextValue;
  }

  get config(): EffectiveConfig {
    return this.contextValue.config;
  }

  /**
   * Adopts changed settings: servers whose definition changed, or that were
   * disabled or removed, are closed; new and changed ones connect in the
   * background. Untouched servers keep their connections.
   */
  async applyConfig(config: EffectiveConfig, redact: HostContext["redact"]): Promise<void> {
    const before = new Map(this.config.servers.map((entry) => [entry.name, this.connectionIdentity(entry)]));
    this.currentRedact = redact;
    this.contextValue.config = config;
    const after = new Map(config.valid ? config.servers.filter((entry) => !entry.masked).map((entry) => [entry.name, entry]) : []);
    for (const [name, connection] of [...this.connections]) {
      const entry = after.get(name);
      if (entry && before.get(name) === this.connectionIdentity(entry)) {
        connection.update(this.context, entry); // new root folders are announced, not reconnected
        continue;
      }
      this.connections.delete(name);
      await connection.close();
    }
    this.syncTools.trigger();
    inBackground(() => this.start(), (error) => this.reportToAll("starting the host", error));
  }

  /**
   * Starts the host: the first call fires `hostStart` (plugins set up what
   * they keep for this host), then every enabled server not yet started
   * connects in the background. Resolves once `hostStart` has run; a tap
   * that fails rejects it, and then no server starts.
   */
  start(): Promise<void> {
    const started = this.fireHostStart();
    if (!this.config.valid) return started;
    for (const entry of this.config.servers) {
      const name = entry.name;
      if (entry.masked || this.connections.has(name) || this.opening.has(name)) continue;
      this.opening.add(name);
      inBackground(
        async () => {
          const ready = await started.then(() => true, () => false); // the failure is start()'s to report
          this.opening.delete(name);
          this.stateChanges.notify();
          // Read again: settings applied while hostStart ran may have changed or removed it.
          const current = this.config.valid ? this.config.servers.find((candidate) => candidate.name === name && !candidate.masked) : undefined;
          if (ready && current && !this.stopped && !this.connections.has(name)) await this.open(current);
        },
        (error) => this.connections.get(name)?.logFailure("starting", error),
      );
    }
    return started;
  }

  /** Starts the host and waits for every enabled server's first attempt to settle (the CLI's `test`). */
  async startAndSettle(): Promise<void> {
    await this.fireHostStart();
    if (!this.config.valid) return;
    const fresh = this.config.servers.filter((entry) => !entry.masked && !this.connections.has(entry.name) && !this.opening.has(entry.name));
    await Promise.all(fresh.map((entry) => this.open(entry)));
  }

  private fireHostStart(): Promise<void> {
    return (this.started ??= this.kernel.hooks.hostStart.promise(this));
  }

  /** Takes over a matching connection an earlier session left in the pool, or connects anew. */
  private async open(entry: ServerEntry): Promise<void> {
    const key = this.poolKeyOf(entry);
    const pooled = key === undefined ? undefined : this.pool?.take(key);
    const events = this.connectionEvents(() => this.connections.get(entry.name));
    if (pooled) {
      this.connections.set(entry.name, pooled);
      await pooled.adopt(this.kernel, this.context, entry, events);
      return;
    }
    const connection = new ServerConnection(this.kernel, this.context, entry, events);
    this.connections.set(entry.name, connection);
    await connection.start();
  }

  private connectionEvents(current: () => ServerConnection | undefined): ConnectionEvents {
    const connected = () => current()?.state === "connected";
    return {
      stateChanged: () => {
        // A server that just connected brings its first catalog: it reaches Pi at once, not a window later.
        if (connected()) inBackground(() => this.bridgeTools(), (error) => current()?.logFailure("offering the tools to Pi", error));
        else this.syncTools.trigger();
        this.stateChanges.notify();
        inBackground(() => this.events.statusChanged?.(), (error) => current()?.logFailure("reporting the status", error));
      },
      // A catalog loaded while connecting is bridged by the "connected" change above; later ones are folded.
      toolsChanged: () => {
        if (connected()) this.syncTools.trigger();
      },
    };
  }

  /** A connection context for asking hooks about a definition that is not connected. */
  private probeContext(entry: ServerEntry): ConnectionContext {
    return { host: this.context, server: entry, log: () => {}, retainedLog: new RetainedLog(0) };
  }

  /**
   * What a live connection must keep to stay open when settings change: the
   * resolved definition apart from its root folders (a change of those is
   * announced to the server instead), its state, and the capabilities the
   * client would declare. How the definition is spelled in its file (`written`,
   * which holds the root folders too) and which file holds it are not part of
   * what the server is connected with.
   */
  private connectionIdentity(entry: ServerEntry): string {
    const { name, enabled, masked, transport, auth } = entry;
    const definition = entry.definition && withoutRootFolders(entry.definition);
    return JSON.stringify({ name, enabled, masked, transport, auth, definition, capabilities: this.kernel.hooks.clientCapabilities.call({}, this.probeContext(entry)) });
  }

  private poolKeyOf(entry: ServerEntry, config: EffectiveConfig = this.config): string | undefined {
    if (!this.pool || !entry.enabled || !entry.definition) return undefined;
    const probe = this.probeContext(entry);
    return poolKey({
      projectRoot: canonicalPath(this.context.cwd),
      trusted: config.sources.projectTrusted,
      // Other root folders are announced to a reused connection, not a reason for a new one.
      definition: withoutRootFolders(entry.definition),
      // The auth settings, refined by the auth plugins (stored OAuth credentials: logged out or authorized anew).
      authIdentity: authIdentityOf(this.kernel, probe),
      connectTimeoutMs: entry.definition.connectTimeoutMs ?? config.connectTimeoutMs,
      requestTimeoutMs: entry.definition.requestTimeoutMs ?? config.requestTimeoutMs,
      requestDeadlineMs: entry.definition.requestDeadlineMs ?? config.requestDeadlineMs,
      capabilities: this.kernel.hooks.clientCapabilities.call({}, probe),
    });
  }

  /** A failure of work for every server (the tool sync) goes to each server's log. */
  private reportToAll(what: string, error: unknown): void {
    for (const connection of this.connections.values()) connection.logFailure(what, error);
  }

  /**
   * The pool key under which `connection` may wait for the next session, or
   * undefined when it must close instead: its definition is no longer the one
   * in `settings` (re-read at handoff: changed, disabled, removed, or the
   * settings became invalid), or the stored credentials are no longer the
   * ones it was built with (a logout or a new `auth`, maybe in another terminal).
   */
  private retainKeyOf(connection: ServerConnection, settings: EffectiveConfig): string | undefined {
    if (!connection.reusable || !settings.valid) return undefined;
    const entry = settings.servers.find((candidate) => candidate.name === connection.name && !candidate.masked);
    if (!entry || this.connectionIdentity(entry) !== this.connectionIdentity(connection.entry)) return undefined;
    if (!connection.stillAuthorizedAsBuilt()) return undefined;
    return this.poolKeyOf(entry, settings);
  }

  connection(name: string): ServerConnection | undefined {
    return this.connections.get(name);
  }

  /** A configured, enabled server, as plugins see it. */
  server(name: string): ServerConnection | undefined {
    return this.connections.get(name);
  }

  async complete(request: CompletionRequest): Promise<readonly string[]> {
    return (await this.kernel.hooks.complete.promise(request)) ?? [];
  }


  status(): ConnectionStatus[] {
    return [...this.connections.values()].map((connection) => connection.status());
  }

  async reconnect(name: string): Promise<void> {
    const connection = this.connections.get(name);
    if (!connection) throw new Error(`no server "${name}" in this session`);
    await connection.close();
    await connection.start();
  }

  /**
   * Waits until no server is still connecting or retrying (or the time is up),
   * then until their tools have reached Pi. Returns whether everything settled.
   */
  async settled(timeoutMs: number): Promise<boolean> {
    const busy = () => this.opening.size > 0 || [...this.connections.values()].some((connection) => connection.state === "connecting" || connection.state === "retrying");
    await this.stateChanges.until(() => !busy(), timeoutMs);
    await this.flushTools();
    return !busy();
  }

  /**
   * Waits until the catalog changes already announced have reached Pi: the
   * servers' re-lists (folded, then under way) and the host's own folded sync.
   */
  async flushTools(): Promise<void> {
    await Promise.all([...this.connections.values()].map((connection) => connection.catalogSettled()));
    await this.syncTools.idle();
    await this.bridgeTools();
  }

  /**
   * Brings Pi's tools in line with the connected servers' catalogs: registers
   * new and changed tools, leaves unchanged ones alone (Pi's registration cost
   * grows with its registry), and deactivates tools that went away.
   */
  private async bridgeTools(): Promise<void> {
    if (this.stopped) return;
    const servers = this.config.servers.map((entry) => entry.name);
    const changed: BridgedTool[] = [];
    const now = new Set<string>();
    for (const connection of this.connections.values()) {
      if (connection.state !== "connected") continue;
      const server = connection.name;
      const serverTools = connection.catalog.toolNames();
      for (const { tool, json } of connection.catalog.tools) {
        const name = this.piNameOf(connection, tool.name, serverTools, servers);
        if (name === undefined) continue;
        now.add(name);
        const exposure = exposureOf(this.config, connection.entry.definition, tool.name);
        if (this.registered.get(name) === `${exposure}:${json}` && this.active.has(name)) continue;
        this.registered.set(name, `${exposure}:${json}`);
        changed.push({ name, server, tool, exposure, execute: (args, options) => this.execute(connection, tool, args, options) });
      }
    }
    this.synced = [...this.connections.values()]
      .filter((connection) => connection.state === "connected")
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((connection) => ({
        name: connection.name,
        instructions: connection.instructions(),
        exposures: [...new Set(connection.catalog.tools.map(({ tool }) => exposureOf(this.config, connection.entry.definition, tool.name)))].sort(),
      }));
    const gone = [...this.active].filter((name) => !now.has(name));
    for (const name of gone) this.active.delete(name);
    for (const tool of changed) this.active.add(tool.name);
    if (changed.length > 0) this.sink.register(changed);
    if (gone.length > 0) this.sink.deactivate(gone);
  }

  /**
   * A tool's Pi name: the one it was given earlier in this session (Pi cannot
   * rename a tool), else what the `toolName` hook (the tool-names plugin)
   * makes of `mcp__<server>__<tool>`. A name providers would reject, or one
   * another tool has, is not registered: the tool is left out, and its
   * server's log says why.
   */
  private piNameOf(connection: ServerConnection, tool: string, serverTools: readonly string[], servers: readonly string[]): string | undefined {
    const server = connection.name;
    const id = `${server}\u0000${tool}`;
    const known = this.names.get(id);
    if (known !== undefined) return known;
    const ownerOf = (name: string) => {
      const owner = this.owners.get(name);
      return owner !== undefined && owner !== id ? owner : undefined;
    };
    const name = this.kernel.hooks.toolName.call(`mcp__${server}__${tool}`, { server, tool, serverTools, servers, taken: (candidate) => ownerOf(candidate) !== undefined });
    const owner = ownerOf(name);
    const problem = !TOOL_NAME_PATTERN.test(name) ? "model providers accept no such tool name" : owner !== undefined ? `another tool (${owner.replace("\u0000", "/")}) has it` : undefined;
    if (problem === undefined) {
      this.names.set(id, name);
      this.owners.set(name, id);
      return name;
    }
    if (!this.unnamed.has(`${id}\u0000${name}`)) {
      this.unnamed.add(`${id}\u0000${name}`);
      connection.log.append(`[pi-mcp] left out tool ${JSON.stringify(tool)}: its Pi name ${JSON.stringify(name)} cannot be used (${problem})\n`);
    }
    return undefined;
  }

  /**
   * The system prompt with this host's additions (the Instruction Snapshot):
   * synchronous, from what the last catalog sync delivered, never waiting for
   * a connection.
   */
  systemPrompt(base: string): string {
    return this.kernel.hooks.systemPrompt.call(base, { host: this.context, servers: this.synced });
  }

  /** Lines features add to `/mcp status`. */
  statusLines(): string[] {
    return this.kernel.hooks.statusLines.call([], this.context);
  }

  get kernelInstance(): K {
    return this.kernel;
  }

  /** The Pi tool names currently offered, per server (for status). */
  activeTools(): string[] {
    return [...this.active];
  }

  /** A released session's tool definitions are dormant: they start nothing. */
  private execute(connection: ServerConnection, tool: Tool, args: Record<string, unknown>, options: CallOptions): Promise<ToolOutcome> {
    if (this.stopped || this.connections.get(connection.name) !== connection) {
      return Promise.reject(new Error(`${connection.name}/${tool.name}: this session's MCP host has been released`));
    }
    return callServerTool(this.results, this.schemas, connection, tool, args, options);
  }

  /**
   * Ends the host. When Pi replaces the session (`reload`, `new`, `resume`,
   * `fork`), live connections wait in the pool for the next session; on quit,
   * and for anything not reusable, connections close within the budget.
   */
  async shutdown(budgetMs: number = DEFAULTS.shutdownBudgetMs, reason: "quit" | "replaced" = "quit", handoff: Handoff = {}): Promise<void> {
    this.stopped = true;
    this.syncTools.cancel();
    if (reason === "replaced" && this.pool) {
      const settings = handoff.settings ?? this.config;
      for (const [name, connection] of [...this.connections]) {
        // Decided now, from the settings and credentials as they are: anything else closes below, within the budget.
        const key = this.retainKeyOf(connection, settings);
        if (key === undefined) continue;
        this.connections.delete(name);
        this.pool.retain(key, connection);
      }
    }
    const connections = [...this.connections.values()];
    // Remember the children now (pooled ones too, on quit): close() forgets them, and a stubborn one must still be killed.
    const pids = [...connections.map((connection) => connection.status().pid), ...(reason === "quit" ? (this.pool?.pids() ?? []) : [])].filter(
      (pid): pid is number => pid !== undefined,
    );
    // On quit, retained connections close within the same budget.
    const closing = Promise.all([...connections.map((connection) => connection.close()), ...(reason === "quit" && this.pool ? [this.pool.drain()] : [])]);
    let timer: NodeJS.Timeout | undefined;
    const inTime = await Promise.race([closing.then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), budgetMs)))]);
    clearTimeout(timer);
    if (!inTime) for (const pid of pids) killQuietly(pid);
    await this.kernel.hooks.hostShutdown.promise(this);
  }
}

