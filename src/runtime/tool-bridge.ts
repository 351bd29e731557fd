import type { Tool } from "@modelcontextprotocol/client";
import { Turns } from "../kernel/async.ts";
import { PiMcpError, sessionEnded } from "../kernel/errors.ts";
import type { PluginKernel } from "../kernel/hooks.ts";
import type { ResultPipeline } from "../kernel/host.ts";
import { TOOL_NAME_PATTERN } from "../kernel/limits.ts";
import type { CallOptions, ToolOutcome } from "../kernel/services.ts";
import type { EffectiveConfig, Exposure, ServerEntry } from "../kernel/settings.ts";
import type { SystemPromptContext } from "../kernel/types.ts";
import type { CachedServer, CatalogEntry } from "./catalog-cache.ts";
import type { ServerConnection } from "./connection.ts";
import { definitionTokens, type BudgetPlan, type ContextBudget } from "./context-budget.ts";
import { LazySchemas } from "./schemas.ts";
import { callServerTool } from "./tool-call.ts";

/** The longest stretch of a sync's own work between two turns of Pi's event loop. */
const SYNC_TURN_MS = 10;
/**
 * A sync pauses only after this many steps (each tool is two: estimated, bridged): the catalogs of up
 * to 256 tools are synced at once, so its tools have reached Pi when its server's "connected" is
 * reported, whatever the machine's load.
 */
const SYNC_MIN_STEPS = 512;

/** What a sync did: whether Pi's tools or the Instruction Snapshot changed, and the catalogs it synced. */
export interface Synced {
  readonly changed: boolean;
  readonly offered: readonly Offered[];
}

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

/** A catalog a server offers Pi now, and where it comes from. */
export interface Offered {
  readonly entry: ServerEntry;
  readonly catalog: readonly CatalogEntry[];
  readonly instructions: string | undefined;
}

/** What the bridge reads of its host. */
export interface BridgeHost {
  /** The host's settings now. */
  config(): EffectiveConfig;
  readonly results: ResultPipeline;
  /** The connection of server `name`, if the host has one. */
  server(name: string): ServerConnection | undefined;
  /** Whether the host was released: its tools are dormant. */
  released(): boolean;
  /** Resolves once the host has opened server `name` (or was released), bounded; Pi's abort ends the wait. */
  opened(name: string, signal: AbortSignal | undefined): Promise<unknown>;
  /** Whether server `name`'s preloaded catalog was dropped as belonging to other settings or credentials. */
  stale(name: string): boolean;
}

/**
 * The host's side of Pi's tools: each server tool's Pi name (kept for the
 * session: Pi cannot rename a tool) and owner, what Pi was given of it
 * (registered, active), the Instruction Snapshot as the last sync delivered
 * it, and the calls Pi makes of those tools.
 */
export class ToolBridge {
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
  /** The sync under way (syncs run one at a time). */
  private syncing: Promise<unknown> | undefined;

  constructor(
    private readonly kernel: PluginKernel,
    private readonly sink: ToolSink,
    private readonly host: BridgeHost,
    /** Decides the exposure of `auto` tools (src/runtime/context-budget.ts). */
    private readonly budget: ContextBudget,
  ) {}

  /**
   * The tools the Pi entry registered at load for `servers` become the
   * bridge's: their names are kept for the session, they count as registered
   * and active (nothing is registered again unless it changes), and the
   * Instruction Snapshot is what `offered` contributes, as it was recorded.
   */
  preload(servers: readonly CachedServer[], offered: readonly Offered[]): void {
    for (const server of servers) {
      for (const tool of server.tools) {
        const id = `${server.name}\u0000${tool.tool.name}`;
        this.names.set(id, tool.piName);
        this.owners.set(tool.piName, id);
        this.registered.set(tool.piName, `${tool.exposure}:${tool.json}`);
        this.active.add(tool.piName);
      }
    }
    this.synced = this.instructionSections(offered);
  }

  /** Hands the sink the tools of `servers` Pi was given at load and that are still active: the host answers for them now. */
  adopt(servers: readonly CachedServer[]): void {
    const adopted = servers.flatMap((server) =>
      server.tools
        .filter((tool) => this.active.has(tool.piName))
        .map((tool) => this.bridged(tool.piName, server.name, tool.tool, tool.exposure)),
    );
    if (adopted.length > 0) this.sink.adopt?.(adopted);
  }

  /** What the servers contribute to the Instruction Snapshot, as the last sync delivered it. */
  get instructionServers(): SystemPromptContext["servers"] {
    return this.synced;
  }

  /**
   * The tools this bridge offers Pi with the exposure each was registered
   * with, in a canonical order (servers by name, each one's tools in its
   * catalog's order): Pi's entry keeps the declared order to it
   * (src/pi/tool-order.ts), so the same catalogs give the same order whichever
   * server connected first.
   */
  offeredTools(offered: readonly Offered[]): [string, Exposure][] {
    const tools: [string, Exposure][] = [];
    for (const { entry, catalog } of offered)
      for (const { tool } of catalog) {
        const name = this.activeName(entry.name, tool.name);
        const exposure = name === undefined ? undefined : this.registered.get(name)?.split(":", 1)[0];
        if (name !== undefined && exposure !== undefined) tools.push([name, exposure as Exposure]);
      }
    return tools;
  }

  /** The exposure Pi was given tool `piName` with. */
  registeredExposure(piName: string): Exposure | undefined {
    return this.registered.get(piName)?.split(":", 1)[0] as Exposure | undefined;
  }

  /** The Pi name of `server`'s tool `tool` while Pi has it active. */
  activeName(server: string, tool: string): string | undefined {
    const piName = this.names.get(`${server}\u0000${tool}`);
    return piName !== undefined && this.active.has(piName) ? piName : undefined;
  }

  /**
   * Brings Pi's tools in line with what the servers offer (`offer()`, read
   * when this sync starts): registers new and changed tools, leaves unchanged
   * ones alone (Pi's registration cost grows with its registry), and
   * deactivates tools that went away. Syncs run one at a time, each in turns
   * of at most SYNC_TURN_MS between which Pi's event loop runs (a first
   * catalog of thousands of tools is work for longer than the TUI may wait).
   * Says whether Pi's tools or the Instruction Snapshot changed, and what was
   * offered.
   */
  sync(offer: () => readonly Offered[]): Promise<Synced> {
    // Without a sync under way it starts now: a sync that needs no pause is done before this returns.
    const previous = this.syncing;
    const run = previous ? previous.then(() => this.syncNow(offer())) : this.syncNow(offer());
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.syncing = settled;
    void settled.then(() => {
      if (this.syncing === settled) this.syncing = undefined;
    });
    return run;
  }

  /** Resolves once the syncs started so far have run (at once when none is under way). */
  async syncsDone(): Promise<void> {
    await this.syncing;
  }

  private async syncNow(offered: readonly Offered[]): Promise<Synced> {
    const turns = new Turns(SYNC_TURN_MS, SYNC_MIN_STEPS);
    const unchanged = { changed: false, offered };
    const config = this.host.config();
    // Each tool's estimate first (serialisations, kept for the catalog's life): the plan then looks them up.
    for (const { entry, catalog } of offered)
      for (const { tool } of catalog) {
        definitionTokens(tool, entry.name);
        if (turns.due() && (await this.pausedAndReleased(turns))) return unchanged;
      }
    const plan = this.budget.plan(config, offered);
    const servers = config.servers.map((entry) => entry.name);
    const changed: BridgedTool[] = [];
    const now = new Set<string>();
    /** Direct tools the budget defers now: declared no more (tool_search loads them). */
    const undeclared: string[] = [];
    for (const { entry, catalog } of offered) {
      const server = entry.name;
      const serverTools = catalog.map(({ tool }) => tool.name);
      for (const { tool, json } of catalog) {
        if (turns.due() && (await this.pausedAndReleased(turns))) return unchanged;
        const name = this.piNameOf(server, tool.name, serverTools, servers);
        if (name === undefined) continue;
        now.add(name);
        const exposure = plan.exposure(entry, tool.name);
        const previous = this.registered.get(name);
        if (previous === `${exposure}:${json}` && this.active.has(name)) continue;
        if (exposure !== "direct" && previous?.startsWith("direct:") && this.active.has(name)) undeclared.push(name);
        this.registered.set(name, `${exposure}:${json}`);
        changed.push(this.bridged(name, server, tool, exposure));
      }
    }
    const sections = this.instructionSections(offered, plan);
    const sectionsChanged = JSON.stringify(sections) !== JSON.stringify(this.synced);
    this.synced = sections;
    const gone = [...this.active].filter((name) => !now.has(name));
    for (const name of gone) this.active.delete(name);
    for (const tool of changed) this.active.add(tool.name);
    if (changed.length > 0) this.sink.register(changed);
    if (gone.length > 0 || undeclared.length > 0) this.sink.deactivate([...gone, ...undeclared]);
    return { changed: changed.length > 0 || gone.length > 0 || sectionsChanged, offered };
  }

  /** Pauses for Pi's event loop; says whether the host was released meanwhile (the sync then stops). */
  private async pausedAndReleased(turns: Turns): Promise<boolean> {
    await turns.pause();
    return this.host.released();
  }

  /** What the offered servers contribute to the Instruction Snapshot, in name order. */
  private instructionSections(
    offered: readonly Offered[],
    plan: BudgetPlan = this.budget.plan(this.host.config(), offered),
  ): SystemPromptContext["servers"] {
    return [...offered]
      .sort((a, b) => (a.entry.name < b.entry.name ? -1 : a.entry.name > b.entry.name ? 1 : 0))
      .map(({ entry, instructions }) => ({ name: entry.name, instructions, exposures: [...plan.exposures(entry.name)] }));
  }

  /** A tool as the sink registers it: every call is routed by its Pi name (see call). */
  private bridged(name: string, server: string, tool: Tool, exposure: Exposure): BridgedTool {
    return { name, server, tool, exposure, execute: (args, options) => this.call(name, args, options) };
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
    const name = this.kernel.hooks.toolName.call(`mcp__${server}__${tool}`, {
      server,
      tool,
      serverTools,
      servers,
      taken: (candidate) => ownerOf(candidate) !== undefined,
    });
    const owner = ownerOf(name);
    const problem = !TOOL_NAME_PATTERN.test(name)
      ? "model providers accept no such tool name"
      : owner !== undefined
        ? `another tool (${owner.replace("\u0000", "/")}) has it`
        : undefined;
    if (problem === undefined) {
      this.names.set(id, name);
      this.owners.set(name, id);
      return name;
    }
    if (!this.unnamed.has(`${id}\u0000${name}`)) {
      this.unnamed.add(`${id}\u0000${name}`);
      this.host
        .server(server)
        ?.log.append(`[pi-mcp] left out tool ${JSON.stringify(tool)}: its Pi name ${JSON.stringify(name)} cannot be used (${problem})\n`);
    }
    return undefined;
  }

  /**
   * One call of a server tool, by its Pi name (the tools Pi was given at load
   * and those the host registered alike). It waits until the host has opened
   * the server; a lazy server that is idle is started; a server still
   * connecting is waited for (up to its connect timeout), and so is one
   * reconnecting after an unexpected close (its scheduled retry and that
   * attempt). The tool must still be offered, and its server's current
   * catalog must have it: a call of a tool that went away (the server's new
   * list lacks it, its settings or credentials changed since its catalog was
   * recorded, the server is gone or failed) fails saying so, and is never
   * sent to another server. A released session's tools are dormant: they
   * start nothing. Pi's abort signal ends every wait.
   */
  async call(name: string, args: Record<string, unknown>, options: CallOptions): Promise<ToolOutcome> {
    const owner = this.owners.get(name);
    const released = () => sessionEnded(name);
    if (this.host.released() || owner === undefined) throw released();
    const [server = "", tool = ""] = owner.split("\u0000");
    const cancelled = () => new PiMcpError("cancelled", `${server}/${tool} was cancelled`);
    // Before the host has opened the server (hostStart runs first) there is no connection to call.
    await this.host.opened(server, options.signal);
    if (this.host.released()) throw released();
    if (options.signal?.aborted) throw cancelled();
    const connection = this.host.server(server);
    if (!connection || !this.active.has(name)) throw this.notOffered(name, server, tool);
    await connection.connected(options.signal).catch((error: unknown) => {
      throw options.signal?.aborted ? cancelled() : error; // not connected: requireClient says why
    });
    const entry = connection.catalog.tool(tool);
    if (this.host.released() || this.host.server(server) !== connection) throw released();
    if (!entry || !this.active.has(name)) throw this.notOffered(name, server, tool);
    return callServerTool(this.host.results, this.schemas, connection, entry.tool, args, options);
  }

  /** Why the tool `name` is not offered any more, in words. */
  private notOffered(name: string, server: string, tool: string): PiMcpError {
    const config = this.host.config();
    const entry = config.valid
      ? config.servers.find((candidate) => candidate.name === server && !candidate.masked && candidate.enabled)
      : undefined;
    const status = this.host.server(server)?.status();
    const why = !entry
      ? `server "${server}" is not configured (or not enabled) any more`
      : this.host.stale(server)
        ? `its tool list was recorded for settings or credentials of server "${server}" that have changed since; the server's own tools are offered once it has connected`
        : status && status.state !== "connected" && status.state !== "idle" && status.state !== "connecting"
          ? `MCP server "${server}" is ${status.state}${status.cause ? `: ${status.cause}` : ""}`
          : `server "${server}" no longer lists tool "${tool}"`;
    return new PiMcpError("not_offered", `MCP tool ${name} is not offered any more: ${why}`);
  }
}
