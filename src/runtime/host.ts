import { createHash } from "node:crypto";
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
import { PiMcpError } from "../kernel/errors.ts";
import { INHERITED_VARIABLES, PI_MCP_VERSION } from "../config/settings-stamp.ts";
import type { CachedServer, CachedStart, CatalogEntry } from "./catalog-cache.ts";
import type { SnapshotServer, StartSnapshot } from "./catalog-store.ts";

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
  /** Tools Pi was given before the host existed (registered from a persisted or retained catalog while Pi loaded): the host answers for them now. */
  adopt?(tools: readonly BridgedTool[]): void;
}

/** What a replaced session knows at handoff. */
export interface Handoff {
  /** The settings as they are now (re-read by the caller): a connection whose definition changed is closed, not retained. */
  readonly settings?: EffectiveConfig;
  /** The settings stamp of those settings (src/config/settings-stamp.ts): what the next session's Pi entry compares to take the handover. */
  readonly stamp?: string;
}

/**
 * The host's persisted catalogs (Pi only): what Pi was given while it loaded
 * the extension, and where the host records what it offers for the next
 * session with the same settings.
 */
export interface HostCatalogs {
  /** The tools the Pi entry registered at load: each server's are offered only while its catalog identity matches. */
  readonly preloaded?: CachedStart;
  /** The settings stamp of the host's current settings; undefined when it is not known (nothing is recorded then). */
  stamp(): string | undefined;
  /** Records what the host offers (the store writes only what changed). */
  save(snapshot: StartSnapshot): Promise<void>;
}

/** A catalog a server offers Pi now, and where it comes from. */
interface Offered {
  readonly entry: ServerEntry;
  readonly catalog: readonly CatalogEntry[];
  readonly instructions: string | undefined;
}

/** How long a call of a tool registered from a catalog waits for the host to open its server (only a stuck host start reaches it). */
const OPEN_WAIT_MS = 30_000;
/** Changes of what is offered are recorded once per window (servers connecting together make one write). */
const PERSIST_WINDOW_MS = 250;
/** A text no system prompt starts with: what the hook adds after it is the Instruction Snapshot's text. */
const PROMPT_BASE = "\u0000pi-mcp: the system prompt before the Instruction Snapshot\u0000";

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
  /**
   * Servers whose catalog Pi was given at load and that have not been
   * reconciled yet: offered while the server is not configured to be checked
   * yet, or its first connection is still under way; dropped when the
   * catalog's identity no longer matches the server's (settings or
   * credentials changed), when the server connects (its live catalog takes
   * over) or when it fails.
   */
  private readonly preloaded = new Map<string, CachedServer>();
  /** Servers whose preloaded catalog was dropped because it belongs to other settings or credentials. */
  private readonly stale = new Set<string>();
  private readonly persist = coalesce(PERSIST_WINDOW_MS, () => this.saveCatalogs(), (error) => this.reportToAll("keeping the catalogs", error));
  /** Whether an offered catalog changed since it was last recorded. */
  private persistDue = false;

  constructor(
    private readonly kernel: K,
    context: HostContext,
    private readonly sink: ToolSink,
    private readonly events: HostEvents = {},
    /** Where connections wait between sessions of one process; without it nothing is reused. */
    private readonly pool?: ConnectionPool,
    /** Persisted catalogs (Pi only); without them nothing is preloaded or recorded. */
    private readonly catalogs?: HostCatalogs,
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
    this.takePreloaded(catalogs?.preloaded);
  }

  /**
   * The tools the Pi entry registered at load become this host's: their names
   * are kept for the session, they count as registered and active (nothing
   * is registered again unless it changes), and their servers' instructions
   * are in the Instruction Snapshot, as they were when the catalogs were
   * recorded. Whether each server's catalog is still its own is checked when
   * the host starts (see verifyPreloaded).
   */
  private takePreloaded(start: CachedStart | undefined): void {
    for (const server of start?.servers ?? []) {
      this.preloaded.set(server.name, server);
      for (const tool of server.tools) {
        const id = `${server.name}\u0000${tool.tool.name}`;
        this.names.set(id, tool.piName);
        this.owners.set(tool.piName, id);
        this.registered.set(tool.piName, `${tool.exposure}:${tool.json}`);
        this.active.add(tool.piName);
      }
    }
    this.synced = this.instructionSections(this.offeredCatalogs());
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
    this.verifyPreloaded();
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

  /**
   * Drops every preloaded catalog that is no longer its server's: the server
   * is not configured or enabled any more (or the settings are invalid), or
   * the catalog identity (definition, credentials, capabilities, project,
   * trust) differs from the server's now. Their tools are withdrawn at once,
   * before any server connects; a call of one fails saying why.
   */
  private verifyPreloaded(): void {
    if (this.preloaded.size === 0) return;
    const entries = new Map(this.config.valid ? this.config.servers.filter((entry) => entry.enabled && !entry.masked).map((entry) => [entry.name, entry]) : []);
    for (const [name, server] of [...this.preloaded]) {
      const entry = entries.get(name);
      const identity = entry && this.catalogIdentity(entry);
      if (identity !== undefined && server.matches(identity)) continue;
      this.preloaded.delete(name);
      if (entry) this.stale.add(name);
    }
    const adopted = [...this.preloaded.values()].flatMap((server) => server.tools.filter((tool) => this.active.has(tool.piName)).map((tool) => this.bridged(tool.piName, server.name, tool.tool, tool.exposure)));
    if (adopted.length > 0) this.sink.adopt?.(adopted);
    inBackground(() => this.bridgeTools(), (error) => this.reportToAll("offering the tools to Pi", error));
  }

  /** Takes over a matching connection an earlier session left in the pool, or connects anew. */
  private async open(entry: ServerEntry): Promise<void> {
    const key = this.poolKeyOf(entry);
    const pooled = key === undefined ? undefined : this.pool?.take(key);
    const events = this.connectionEvents(() => this.connections.get(entry.name));
    if (pooled) {
      this.connections.set(entry.name, pooled);
      this.preloaded.delete(entry.name); // the live catalog came along
      await pooled.adopt(this.kernel, this.context, entry, events);
      return;
    }
    const connection = new ServerConnection(this.kernel, this.context, entry, events);
    this.connections.set(entry.name, connection);
    const known = this.preloaded.get(entry.name);
    if (connection.lifecycle === "lazy" && known) {
      // A lazy server whose catalog is known waits for its first use without a process or connection.
      this.preloaded.delete(entry.name);
      connection.rest(known.catalog, known.instructions);
      return;
    }
    // A lazy server without a catalog connects once to have one; it closes when it has been idle long enough.
    await connection.start();
  }

  private connectionEvents(current: () => ServerConnection | undefined): ConnectionEvents {
    const connected = () => current()?.state === "connected";
    return {
      stateChanged: () => {
        const connection = current();
        // The first attempt has settled: a preloaded catalog gives way to the live one (or goes with a failure).
        if (connection && connection.state !== "connecting" && connection.state !== "idle" && this.preloaded.delete(connection.name)) this.syncTools.trigger();
        if (connection?.state === "connected") this.stale.delete(connection.name);
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
    if (!this.pool) return undefined;
    const parts = this.reuseParts(entry, config);
    return parts && poolKey(parts);
  }

  /**
   * What decides whether a connection may be reused (see poolKey): the
   * canonical project root, trust, the resolved definition without its root
   * folders, the authentication identity, the timeouts and the capabilities.
   */
  private reuseParts(entry: ServerEntry, config: EffectiveConfig): Parameters<typeof poolKey>[0] | undefined {
    if (!entry.enabled || !entry.definition) return undefined;
    const probe = this.probeContext(entry);
    return {
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
    };
  }

  /**
   * The identity of the catalog a connection of `entry` would get: what
   * decides reuse (reuseParts), the variables a local server inherits from Pi
   * (they decide which program its command is) and pi-mcp's version (its
   * catalog checks and capabilities). When a server runs (`lifecycle`,
   * `idleTimeoutMs`) changes nothing it offers. In memory only: it holds
   * resolved values; persisted catalogs are named by its keyed hash.
   */
  private catalogIdentity(entry: ServerEntry, config: EffectiveConfig = this.config): string | undefined {
    const parts = this.reuseParts(entry, config);
    if (!parts || !entry.definition) return undefined;
    const { lifecycle: _lifecycle, idleTimeoutMs: _idle, ...definition } = parts.definition as ServerEntry["definition"] & object;
    const inherited = entry.definition.transport === "stdio" ? INHERITED_VARIABLES.map((name) => [name, process.env[name] ?? null]) : [];
    return createHash("sha256").update(JSON.stringify({ ...parts, definition, inherited, version: PI_MCP_VERSION })).digest("hex");
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
   * What each server offers Pi now: a connected server its live catalog; a
   * lazy server that is idle the catalog it keeps (from its last connection
   * or a persisted catalog); a server whose first connection is still under
   * way the catalog Pi was given at load (preloaded), if it is still its own.
   */
  private offeredCatalogs(): Offered[] {
    if (!this.config.valid) return [];
    const offered: Offered[] = [];
    for (const entry of this.config.servers) {
      if (entry.masked || !entry.enabled) continue;
      const connection = this.connections.get(entry.name);
      if (connection?.state === "connected" || connection?.state === "idle") {
        offered.push({ entry, catalog: connection.catalog.tools, instructions: connection.instructions() });
        continue;
      }
      const known = this.preloaded.get(entry.name);
      if (known && (!connection || connection.state === "connecting")) offered.push({ entry, catalog: known.catalog, instructions: known.instructions });
    }
    return offered;
  }

  /** What the offered servers contribute to the Instruction Snapshot, in name order. */
  private instructionSections(offered: readonly Offered[]): SystemPromptContext["servers"] {
    return [...offered]
      .sort((a, b) => (a.entry.name < b.entry.name ? -1 : a.entry.name > b.entry.name ? 1 : 0))
      .map(({ entry, catalog, instructions }) => ({
        name: entry.name,
        instructions,
        exposures: [...new Set(catalog.map(({ tool }) => exposureOf(this.config, entry.definition, tool.name)))].sort(),
      }));
  }

  /**
   * Brings Pi's tools in line with what the servers offer: registers new and
   * changed tools, leaves unchanged ones alone (Pi's registration cost grows
   * with its registry), and deactivates tools that went away. A change is
   * recorded for the next session (persisted catalogs).
   */
  private async bridgeTools(): Promise<void> {
    if (this.stopped) return;
    const servers = this.config.servers.map((entry) => entry.name);
    const changed: BridgedTool[] = [];
    const now = new Set<string>();
    const offered = this.offeredCatalogs();
    for (const { entry, catalog } of offered) {
      const server = entry.name;
      const serverTools = catalog.map(({ tool }) => tool.name);
      for (const { tool, json } of catalog) {
        const name = this.piNameOf(server, tool.name, serverTools, servers);
        if (name === undefined) continue;
        now.add(name);
        const exposure = exposureOf(this.config, entry.definition, tool.name);
        if (this.registered.get(name) === `${exposure}:${json}` && this.active.has(name)) continue;
        this.registered.set(name, `${exposure}:${json}`);
        changed.push(this.bridged(name, server, tool, exposure));
      }
    }
    const sections = this.instructionSections(offered);
    const sectionsChanged = JSON.stringify(sections) !== JSON.stringify(this.synced);
    this.synced = sections;
    const gone = [...this.active].filter((name) => !now.has(name));
    for (const name of gone) this.active.delete(name);
    for (const tool of changed) this.active.add(tool.name);
    if (changed.length > 0) this.sink.register(changed);
    if (gone.length > 0) this.sink.deactivate(gone);
    if (this.catalogs && (changed.length > 0 || gone.length > 0 || sectionsChanged)) {
      this.persistDue = true;
      this.persist.trigger();
    }
  }

  /** A tool as the sink registers it: every call is routed by its Pi name (see callTool). */
  private bridged(name: string, server: string, tool: Tool, exposure: Exposure): BridgedTool {
    return { name, server, tool, exposure, execute: (args, options) => this.callTool(name, args, options) };
  }

  /**
   * A tool's Pi name: the one it was given earlier in this session (Pi cannot
   * rename a tool), else what the `toolName` hook (the tool-names plugin)
   * makes of `mcp__<server>__<tool>`. A name providers would reject, or one
   * another tool has, is not registered: the tool is left out, and its
   * server's log says why.
   */
  private piNameOf(server: string, tool: string, serverTools: readonly string[], servers: readonly string[]): string | undefined {
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
      this.connections.get(server)?.log.append(`[pi-mcp] left out tool ${JSON.stringify(tool)}: its Pi name ${JSON.stringify(name)} cannot be used (${problem})\n`);
    }
    return undefined;
  }

  /**
   * What the host offers, as the next session with the same settings stamp
   * should find it: each offered server's catalog (under its identity), the
   * tools Pi has of it, and the Instruction Snapshot's text. A server whose
   * catalog holds a value resolved from the settings is left out (no
   * resolved value is ever stored).
   */
  private snapshot(digest: string, config: EffectiveConfig = this.config): StartSnapshot {
    const secrets = [...(this.currentRedact.secrets ?? [])].filter((secret) => secret.length >= 4);
    const holdsSecret = (text: string | undefined) => text !== undefined && secrets.some((secret) => text.includes(secret) || text.includes(JSON.stringify(secret).slice(1, -1)));
    const servers: SnapshotServer[] = [];
    /** Whether a server offered now is left out: the system prompt, built from every offered server, is then not kept either. */
    let leftOut = false;
    for (const { entry, catalog, instructions } of this.offeredCatalogs()) {
      const current = config.servers.find((candidate) => candidate.name === entry.name && !candidate.masked);
      const identity = this.catalogIdentity(entry);
      // Settings re-read at handoff that changed this server: its catalog is not the next session's.
      if (identity === undefined || !current || this.catalogIdentity(current, config) !== identity) {
        leftOut = true;
        continue;
      }
      if (holdsSecret(instructions) || catalog.some(({ json }) => holdsSecret(json))) {
        this.connections.get(entry.name)?.log.append("[pi-mcp] its catalog holds a value resolved from the settings: it is not kept for the next session\n");
        leftOut = true;
        continue;
      }
      const tools = catalog.flatMap(({ tool, json }) => {
        const piName = this.names.get(`${entry.name}\u0000${tool.name}`);
        return piName !== undefined && this.active.has(piName) ? [{ piName, exposure: exposureOf(this.config, entry.definition, tool.name), tool, json }] : [];
      });
      servers.push({ name: entry.name, identity, catalog, tools, ...(instructions !== undefined && { instructions }), counts: { tools: catalog.length } });
    }
    const prompt = this.systemPrompt(PROMPT_BASE);
    const keepPrompt = !leftOut && prompt.startsWith(PROMPT_BASE) && !holdsSecret(prompt);
    return { digest, ...(keepPrompt && { prompt: prompt.slice(PROMPT_BASE.length) }), servers };
  }

  /** Records what is offered, when it changed since the last time and the settings stamp is known. */
  private async saveCatalogs(): Promise<void> {
    const digest = this.catalogs?.stamp();
    if (!this.persistDue || !digest || !this.config.valid) return;
    this.persistDue = false;
    await this.catalogs!.save(this.snapshot(digest));
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

  /**
   * One call of a server tool, by its Pi name (the tools Pi was given at load
   * and those the host registered alike). It waits until the host has opened
   * the server; a lazy server that is idle is started; a server still
   * connecting is waited for (up to its connect timeout). The tool must still
   * be offered, and its server's current catalog must have it: a call of a
   * tool that went away (the server dropped it, its settings or credentials
   * changed since its catalog was recorded, the server is gone or failed)
   * fails saying so, and is never sent to another server. A released
   * session's tools are dormant: they start nothing.
   */
  async callTool(name: string, args: Record<string, unknown>, options: CallOptions): Promise<ToolOutcome> {
    const owner = this.owners.get(name);
    const released = () => new PiMcpError("failed", `${name}: this session's MCP host has been released`);
    if (this.stopped || owner === undefined) throw released();
    const [server = "", tool = ""] = owner.split("\u0000");
    // Before the host has opened the server (hostStart runs first) there is no connection to call.
    await this.stateChanges.until(() => this.stopped || (this.started !== undefined && !this.opening.has(server)), OPEN_WAIT_MS);
    if (this.stopped) throw released();
    const connection = this.connections.get(server);
    if (!connection || !this.active.has(name)) throw this.notOffered(name, server, tool);
    await connection.connected();
    const entry = connection.catalog.tool(tool);
    if (this.stopped || this.connections.get(server) !== connection) throw released();
    if (!entry || !this.active.has(name)) throw this.notOffered(name, server, tool);
    return callServerTool(this.results, this.schemas, connection, entry.tool, args, options);
  }

  /** Why the tool `name` is not offered any more, in words. */
  private notOffered(name: string, server: string, tool: string): PiMcpError {
    const entry = this.config.valid ? this.config.servers.find((candidate) => candidate.name === server && !candidate.masked && candidate.enabled) : undefined;
    const status = this.connections.get(server)?.status();
    const why = !entry
      ? `server "${server}" is not configured (or not enabled) any more`
      : this.stale.has(server)
        ? `its tool list was recorded for settings or credentials of server "${server}" that have changed since; the server's own tools are offered once it has connected`
        : status && status.state !== "connected" && status.state !== "idle" && status.state !== "connecting"
          ? `MCP server "${server}" is ${status.state}${status.cause ? `: ${status.cause}` : ""}`
          : `server "${server}" no longer lists tool "${tool}"`;
    return new PiMcpError("failed", `MCP tool ${name} is not offered any more: ${why}`);
  }

  /**
   * Leaves what this session offers Pi to the next session of this Pi
   * process (through the pool): its Pi entry registers those tools while Pi
   * loads it, when its settings stamp is the handoff's. Only servers whose
   * definition is still the one in the settings re-read at handoff are in it.
   */
  private handOver(handoff: Handoff): void {
    if (!this.pool || !this.catalogs || !handoff.stamp) return;
    const snapshot = this.snapshot(handoff.stamp, handoff.settings ?? this.config);
    const servers: CachedServer[] = snapshot.servers.map(({ identity, ...server }) => ({ ...server, matches: (candidate) => candidate === identity }));
    const trusted = (handoff.settings ?? this.config).sources.projectTrusted;
    this.pool.handOver({ digest: handoff.stamp, cwd: this.context.cwd, trusted, at: Date.now(), start: { source: "pool", servers, ...(snapshot.prompt !== undefined && { prompt: snapshot.prompt }) } });
  }

  /**
   * Ends the host. When Pi replaces the session (`reload`, `new`, `resume`,
   * `fork`), live connections wait in the pool for the next session; on quit,
   * and for anything not reusable, connections close within the budget.
   */
  async shutdown(budgetMs: number = DEFAULTS.shutdownBudgetMs, reason: "quit" | "replaced" = "quit", handoff: Handoff = {}): Promise<void> {
    // A change not recorded yet is recorded now (a server that connected just before Pi quits is known next time).
    this.persist.cancel();
    await this.saveCatalogs().catch((error: unknown) => this.reportToAll("keeping the catalogs", error));
    if (reason === "replaced") this.handOver(handoff);
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
    const pids = [...connections.map((connection) => connection.processId), ...(reason === "quit" ? (this.pool?.pids() ?? []) : [])].filter(
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

