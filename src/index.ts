import type { ExtensionAPI, ExtensionCommandContext, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { settlesWithin } from "./kernel/async.ts";
import { sessionEnded } from "./kernel/errors.ts";
import { drawEarlierRows, type EarlierRows } from "./pi/earlier-rows.ts";
import { knownCatalogs, knownOffered, registerKnownTools } from "./pi/preload.ts";
import { keepToolOrder } from "./pi/tool-order.ts";
import { firstStartBound } from "./pi/first-request.ts";
import type { PiMcpCore } from "./pi/extension.ts";
import type { CachedStart } from "./runtime/catalog-cache.ts";

/** The known catalogs, or none when reading them failed (Pi must start whatever the files hold). */
function knownCatalogsOrNone(): CachedStart | undefined {
  try {
    return knownCatalogs();
  } catch (error) {
    process.stderr.write(`pi-mcp: the known tool catalogs could not be read: ${String(error)}\n`);
    return undefined;
  }
}

/**
 * What the core needs that costs most to load (the MCP SDK), loaded before the rest of it. The settings
 * shape check (arktype) is loaded only by a load whose settings changed since their last check
 * (src/config/shape-stamp.ts).
 */
const HEAVY_PARTS: readonly (() => Promise<unknown>)[] = [() => import("@modelcontextprotocol/client")];

const reportLoadFailure = (error: unknown) => void process.stderr.write(`pi-mcp failed to load: ${String(error)}\n`);

/**
 * Pi extension entry: Pi loads this file from source, before the session
 * starts and before the first prompt, so it stays tiny. It registers `/mcp`
 * at once (which makes Pi 0.99.1+ skip its built-in MCP extension) and loads
 * the rest (settings validation, the MCP SDK, the plugins) one event-loop turn
 * after the session started, so Pi's start never pays for it. Tool rows Pi
 * draws before that (the transcript after `/reload`) are pi-mcp's all the
 * same (see src/pi/earlier-rows.ts).
 *
 * The tools of every server whose catalog is known (handed over by the
 * session Pi just replaced, or recorded by an earlier session with the same
 * settings) are registered here, while Pi loads the extension: in linear
 * time, and in Pi's first model request. A call of one loads the rest and
 * waits for its server (src/pi/preload.ts). A session that ends before the
 * rest started loading (a quick `pi -p`) never loads it.
 */
export default function piMcp(pi: ExtensionAPI): void {
  new PiMcpEntry(pi);
}

/**
 * The entry for one load of the extension (one Pi session): what it knows
 * before the core is loaded, and the core once it is. Pi's events come here
 * first; once the core has loaded they go on to it.
 */
class PiMcpEntry {
  /** The known catalogs whose tools were registered while Pi loaded the extension (undefined: none, or registering them failed). */
  private readonly known: CachedStart | undefined;
  private readonly earlierRows: EarlierRows;
  /** The core, once loaded (never, for a session that ended first). */
  private core: PiMcpCore | undefined;
  /** The core's load, once begun (by the session's start one turn later, or by whatever needs the core first). */
  private loading: Promise<void> | undefined;
  /** The deferred load after session_start, until it ran (a session that ends first cancels it). */
  private loadTimer: NodeJS.Timeout | undefined;
  /** The session_start not yet handed to the core: whoever needs the core first delivers it. */
  private pendingStart: ExtensionContext | undefined;
  /** An agent start ran before the core was loaded (it had nothing to wait for): the core's later ones do not wait either. */
  private agentStarted = false;
  /** session_shutdown ran: nothing more is loaded or started. */
  private ended = false;

  private readonly pi: ExtensionAPI;

  constructor(pi: ExtensionAPI) {
    this.pi = pi;
    this.earlierRows = drawEarlierRows(pi);
    this.known = this.registerKnown(knownCatalogsOrNone());
    pi.registerCommand("mcp", {
      description: "Manage MCP servers (pi-mcp): /mcp help",
      getArgumentCompletions: async (prefix: string) => {
        await this.load();
        return (await this.core?.command.getArgumentCompletions?.(prefix)) ?? null;
      },
      handler: async (args: string, ctx: ExtensionCommandContext) => {
        await this.load();
        await this.core?.command.handler(args, ctx);
      },
    });
    pi.on("session_start", (_event, ctx) => this.sessionStart(ctx));
    pi.on("before_agent_start", (event, ctx) => this.beforeAgentStart(event, ctx));
    // Branch changes need a started host.
    pi.on("session_tree", () => this.core?.sessionTree());
    pi.on("session_shutdown", (event, ctx) => this.sessionShutdown(event, ctx));
    // The context budget follows the active model's window; a run's held decisions are released when it ends.
    pi.on("model_select", (event) => this.core?.modelSelect(event));
    pi.on("agent_end", () => this.core?.agentEnd());
  }

  /** Registers the known tools with Pi; a call of one loads the core and runs through it. */
  private registerKnown(known: CachedStart | undefined): CachedStart | undefined {
    if (!known) return undefined;
    try {
      registerKnownTools(this.pi, known, (piName) => async (args, options) => {
        await this.load();
        if (!this.core) throw sessionEnded(piName);
        return this.core.callTool(piName, args, options);
      });
      return known;
    } catch (error) {
      // Pi must start whatever a cache holds: the host then registers every tool itself (those already given route by name).
      process.stderr.write(`pi-mcp: the known tool catalogs could not be registered: ${String(error)}\n`);
      return undefined;
    }
  }

  /** Loading and starting both happen later (or when a command needs them first). */
  private sessionStart(ctx: ExtensionContext): void {
    this.pendingStart = ctx;
    this.loadTimer = setTimeout(() => this.load().catch(reportLoadFailure), 0);
  }

  private async beforeAgentStart(event: { systemPrompt: string }, ctx: ExtensionContext) {
    const since = Date.now();
    // Without a terminal UI, a first request whose servers are not all known waits for them: that needs the rest,
    // within the same bound (a load that takes longer goes on in the background; this start waits no more).
    const bound = this.core || this.ended ? 0 : firstStartBound(ctx, this.known);
    if (bound > 0) await settlesWithin(this.load(), since + bound - Date.now(), reportLoadFailure);
    if (this.core) {
      await this.core.firstAgentStart(ctx, since);
      return this.core.beforeAgentStart(event, ctx);
    }
    this.agentStarted = true;
    // Before the rest has loaded, the known tools are declared as the host would declare them (their order, tool_search),
    // and the system prompt gets the known catalogs' instructions.
    if (this.known) keepToolOrder(this.pi, knownOffered(this.known));
    const systemPrompt = event.systemPrompt;
    return this.known?.prompt && typeof systemPrompt === "string" ? { systemPrompt: systemPrompt + this.known.prompt } : undefined;
  }

  private async sessionShutdown(event: { reason: string }, ctx: ExtensionContext): Promise<void> {
    this.ended = true;
    clearTimeout(this.loadTimer); // a session that ended before the rest started loading has nothing to load it for
    // Not loaded yet means no host was started: nothing to close, and nothing will start now.
    await this.core?.sessionShutdown(event, ctx);
  }

  /**
   * The core, its heaviest parts one at a time: Pi's loader evaluates each
   * synchronously, so a session that ends meanwhile (a quick `pi -p`) waits
   * for the part under way at most, and nothing more is loaded for it.
   */
  private async loadCore(): Promise<typeof import("./pi/extension.ts") | undefined> {
    for (const part of HEAVY_PARTS) {
      if (this.ended) return undefined;
      await part();
    }
    return this.ended ? undefined : import("./pi/extension.ts");
  }

  private async load(): Promise<void> {
    clearTimeout(this.loadTimer);
    this.loading ??= this.loadCore().then((extension) => {
      // A session that ended while the core loaded (a quick `pi -p`) has nothing left to set up:
      // Pi's API of that session is gone.
      if (this.ended || !extension) return;
      const core = new extension.PiMcpCore(this.pi, {
        known: this.known,
        agentStarted: this.agentStarted,
        // Each tool the core registers lets rows drawn before it look for that tool's renderers.
        toolRegistered: () => this.earlierRows.toolRegistered(),
      });
      this.core = core;
      core.earlierRows.then((renderers) => this.earlierRows.ready(renderers)).catch(() => undefined);
    });
    await this.loading;
    const start = this.pendingStart;
    this.pendingStart = undefined;
    if (start && !this.ended) this.core?.sessionStart(start);
  }
}
