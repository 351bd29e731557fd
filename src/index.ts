import type { ExtensionAPI, ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import { drawEarlierRows } from "./pi/earlier-rows.ts";
import { knownCatalogs, registerKnownTools } from "./pi/preload.ts";
import type { PiMcpRegistration } from "./pi/extension.ts";

type Handler = (event: unknown, ctx: unknown) => unknown;

/** The known catalogs, or none when reading them failed (Pi must start whatever the files hold). */
function knownCatalogsOrNone(): ReturnType<typeof knownCatalogs> {
  try {
    return knownCatalogs();
  } catch (error) {
    process.stderr.write(`pi-mcp: the known tool catalogs could not be read: ${String(error)}\n`);
    return undefined;
  }
}
type CommandOptions = Parameters<ExtensionAPI["registerCommand"]>[1];

/** What the core needs that costs most to load (settings validation, the MCP SDK), loaded before the rest of it. */
const HEAVY_PARTS: readonly (() => Promise<unknown>)[] = [() => import("./config/schema.ts"), () => import("@modelcontextprotocol/client")];

/** The events the core handles; the entry forwards them once the core is loaded. */
const EVENTS = ["session_start", "before_agent_start", "session_tree", "session_shutdown"] as const;

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
  const handlers = new Map<string, Handler>();
  let command: CommandOptions | undefined;
  let core: Promise<void> | undefined;
  let loaded = false;
  let ended = false;
  let registration: PiMcpRegistration | undefined;
  /** The deferred load after session_start, until it ran (a session that ends first cancels it). */
  let loadTimer: NodeJS.Timeout | undefined;
  /** The session_start not yet handed to the core: whoever needs the core first delivers it. */
  let pendingStart: [unknown, unknown] | undefined;

  const earlierRows = drawEarlierRows(pi);
  // The core registers itself through this view of `pi`: its events and its command come back here,
  // and each tool it registers lets rows drawn before it look for that tool's renderers.
  const view = new Proxy(pi, {
    get(target, key, receiver) {
      if (key === "on") return (event: string, handler: Handler) => void handlers.set(event, handler);
      if (key === "registerCommand") return (_name: string, options: CommandOptions) => void (command = options);
      if (key === "registerTool") {
        return (...args: Parameters<ExtensionAPI["registerTool"]>) => {
          target.registerTool(...args);
          earlierRows.toolRegistered();
        };
      }
      const value = Reflect.get(target, key, receiver) as unknown;
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  let known = knownCatalogsOrNone();
  /**
   * The core, its heaviest parts one at a time: Pi's loader evaluates each
   * synchronously, so a session that ends meanwhile (a quick `pi -p`) waits
   * for the part under way at most, and nothing more is loaded for it.
   */
  const loadCore = async (): Promise<typeof import("./pi/extension.ts") | undefined> => {
    for (const part of HEAVY_PARTS) {
      if (ended) return undefined;
      await part();
    }
    return ended ? undefined : import("./pi/extension.ts");
  };
  const load = async () => {
    clearTimeout(loadTimer);
    await (core ??= loadCore().then((extension) => {
      // A session that ended while the core loaded (a quick `pi -p`) has nothing left to set up:
      // Pi's API of that session is gone.
      if (ended || !extension) return;
      const { registerPiMcp } = extension;
      const registered = registerPiMcp(view, {}, known);
      registration = registered;
      loaded = true;
      registered.earlierRows.then((renderers) => earlierRows.ready(renderers)).catch(() => undefined);
    }));
    const start = pendingStart;
    pendingStart = undefined;
    if (start && !ended) handlers.get("session_start")?.(...start);
  };

  try {
    if (known) {
      registerKnownTools(pi, known, (piName) => async (args, options) => {
        await load();
        if (!registration) throw new Error(`${piName}: this Pi session has ended`);
        return registration.callTool(piName, args, options);
      });
    }
  } catch (error) {
    // Pi must start whatever a cache holds: the host then registers every tool itself (those already given route by name).
    known = undefined;
    process.stderr.write(`pi-mcp: the known tool catalogs could not be registered: ${String(error)}\n`);
  }

  pi.registerCommand("mcp", {
    description: "Manage MCP servers (pi-mcp): /mcp help",
    getArgumentCompletions: async (prefix: string) => {
      await load();
      return (await command?.getArgumentCompletions?.(prefix)) ?? null;
    },
    handler: async (args: string, ctx: ExtensionCommandContext) => {
      await load();
      await command?.handler(args, ctx);
    },
  });

  for (const event of EVENTS) {
    pi.on(event as "session_start", (async (payload: unknown, ctx: unknown) => {
      if (event === "session_start") {
        // Loading and starting both happen later (or when a command needs them first).
        pendingStart = [payload, ctx];
        loadTimer = setTimeout(() => load().catch((error: unknown) => process.stderr.write(`pi-mcp failed to load: ${String(error)}\n`)), 0);
        return undefined;
      }
      if (event === "session_shutdown") {
        ended = true;
        clearTimeout(loadTimer); // a session that ended before the rest started loading has nothing to load it for
        // Not loaded yet means no host was started: nothing to close, and nothing will start now.
        return loaded ? handlers.get(event)?.(payload, ctx) : undefined;
      }
      if (loaded) return handlers.get(event)?.(payload, ctx);
      // Before the rest has loaded, the system prompt gets the known catalogs' instructions (as the host would);
      // branch changes need a started host.
      const systemPrompt = (payload as { systemPrompt?: unknown }).systemPrompt;
      if (event === "before_agent_start" && known?.prompt && typeof systemPrompt === "string") return { systemPrompt: systemPrompt + known.prompt };
      return undefined;
    }) as never);
  }
}
