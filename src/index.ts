import type { ExtensionAPI, ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import { drawEarlierRows } from "./pi/earlier-rows.ts";

type Handler = (event: unknown, ctx: unknown) => unknown;
type CommandOptions = Parameters<ExtensionAPI["registerCommand"]>[1];

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
 */
export default function piMcp(pi: ExtensionAPI): void {
  const handlers = new Map<string, Handler>();
  let command: CommandOptions | undefined;
  let core: Promise<void> | undefined;
  let loaded = false;
  let ended = false;
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
  const load = async () => {
    await (core ??= import("./pi/extension.ts").then(({ registerPiMcp }) => {
      // A session that ended while the core loaded (a quick `pi -p`) has nothing left to set up:
      // Pi's API of that session is gone.
      if (ended) return;
      const registered = registerPiMcp(view);
      loaded = true;
      registered.earlierRows.then((renderers) => earlierRows.ready(renderers)).catch(() => undefined);
    }));
    const start = pendingStart;
    pendingStart = undefined;
    if (start && !ended) handlers.get("session_start")?.(...start);
  };

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
        setTimeout(() => load().catch((error: unknown) => process.stderr.write(`pi-mcp failed to load: ${String(error)}\n`)), 0);
        return undefined;
      }
      if (event === "session_shutdown") {
        ended = true;
        // Not loaded yet means no host was started: nothing to close, and nothing will start now.
        return loaded ? handlers.get(event)?.(payload, ctx) : undefined;
      }
      // The system prompt and branch changes need a started host: before that there is nothing to add.
      return loaded ? handlers.get(event)?.(payload, ctx) : undefined;
    }) as never);
  }
}
