/**
 * The Pi entry (src/index.ts) through one session's events, in this process:
 * a stand-in for Pi's extension API that records what the entry registers and
 * hands its handlers Pi's events, and a real fixture server. A session that
 * ends before the rest of pi-mcp loaded never loads it; a known tool's call
 * loads the rest, waits for its server and runs; after session_shutdown the
 * host and its server are gone and every tool of that session says so, in
 * one wording and with one code, whichever part took the call.
 */
import { mkdir, realpath, writeFile } from "node:fs/promises";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExtensionAPI, ToolDefinition } from "@earendil-works/pi-coding-agent";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import piMcp from "../../src/index.ts";
import { errorCode } from "../../src/kernel/errors.ts";
import { knownCatalogs } from "../../src/pi/preload.ts";
import { childServers, eventually, fixtureServer, until } from "../helpers/host.ts";

type Handler = (event: unknown, ctx: unknown) => unknown;
type Renderers = Pick<ToolDefinition, "renderCall" | "renderResult">;
type Resolver = (toolName: string, next: () => Renderers | undefined) => Renderers | undefined;

/** Pi's extension API as far as pi-mcp uses it, recording what it is given. */
function fakePi() {
  const handlers = new Map<string, Handler[]>();
  const tools = new Map<string, ToolDefinition>();
  const notices: string[] = [];
  const resolvers: Resolver[] = [];
  /** How often a tool's own renderCall drew a row, by tool. */
  const ownDraws = new Map<string, number>();
  let active: string[] = [];
  let command: { handler: (args: string, ctx: unknown) => Promise<void> } | undefined;
  const api = {
    on: (event: string, handler: Handler) => void handlers.set(event, [...(handlers.get(event) ?? []), handler]),
    registerTool: (definition: ToolDefinition) => {
      const own = definition.renderCall;
      const tool: ToolDefinition = own
        ? {
            ...definition,
            renderCall: (...args: Parameters<typeof own>) => {
              ownDraws.set(definition.name, (ownDraws.get(definition.name) ?? 0) + 1);
              return own(...args);
            },
          }
        : definition;
      tools.set(tool.name, tool);
      if (!active.includes(tool.name)) active.push(tool.name);
    },
    registerCommand: (name: string, options: typeof command) => {
      if (name === "mcp") command = options;
    },
    getAllTools: () => [...tools.values()].map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.parameters })),
    getActiveTools: () => [...active],
    setActiveTools: (names: string[]) => {
      active = [...names];
    },
    registerMessageRenderer() {},
    registerToolRenderer: (resolver: Resolver) => void resolvers.push(resolver),
    appendEntry() {},
    sendMessage() {},
  };
  const cwd = process.cwd();
  const ctx = {
    cwd,
    mode: "json",
    hasUI: false,
    ui: { notify: (text: string) => void notices.push(text), setStatus() {} },
    isProjectTrusted: () => true,
    sessionManager: { getSessionId: () => "entry-test", getSessionFile: () => undefined, getBranch: () => [] },
  };
  return {
    pi: api as unknown as ExtensionAPI,
    tools,
    ownDraws,
    notices,
    ctx,
    /** Fires `event` as Pi does: every handler, in order, awaited. */
    async fire(event: string, payload: unknown = {}): Promise<unknown[]> {
      const results: unknown[] = [];
      for (const handler of handlers.get(event) ?? []) results.push(await handler(payload, ctx));
      return results;
    },
    async command(args: string): Promise<void> {
      await command?.handler(args, ctx);
    },
    /**
     * Draws a row of a call of `name` from the transcript as Pi does (through its tool renderer resolvers),
     * and again whenever the row's renderers ask for it; resolves the number of times it was drawn so far.
     */
    drawRow(name: string): () => number {
      let draws = 0;
      const theme = new Proxy(
        {},
        {
          get:
            () =>
            (...args: unknown[]) =>
              String(args.at(-1) ?? ""),
        },
      );
      const draw = () => {
        draws++;
        let renderers: Renderers | undefined = tools.get(name);
        for (const resolver of resolvers) renderers = resolver(name, () => tools.get(name));
        renderers?.renderCall?.({ text: "earlier" } as never, theme as never, { toolCallId: "earlier-1", invalidate: draw } as never);
      };
      draw();
      return () => draws;
    },
    call(name: string, args: Record<string, unknown> = {}) {
      const tool = tools.get(name);
      if (!tool) throw new Error(`no tool ${name} (tools: ${[...tools.keys()].join(", ")})`);
      return tool.execute("call-1", args as never, undefined, undefined, ctx as never);
    },
  };
}

let root: string;
const saved = { agentDir: process.env.PI_CODING_AGENT_DIR };
beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "pi-mcp-entry-")));
  const agentDir = join(root, "agent");
  await mkdir(agentDir, { recursive: true });
  process.env.PI_CODING_AGENT_DIR = agentDir;
  await writeFile(join(agentDir, "settings.json"), JSON.stringify({ mcp: { servers: { basic: fixtureServer("basic") } } }));
});
afterEach(async () => {
  if (saved.agentDir === undefined) delete process.env.PI_CODING_AGENT_DIR;
  else process.env.PI_CODING_AGENT_DIR = saved.agentDir;
  await rm(root, { recursive: true, force: true });
});

/** A first session that connects the server and records its catalog, so the next session knows its tools. */
async function recordCatalog(): Promise<void> {
  const first = fakePi();
  piMcp(first.pi);
  await first.fire("session_start", { reason: "startup" });
  await first.command("wait");
  await eventually(
    async () => knownCatalogs()?.servers.some((server) => server.name === "basic"),
    30_000,
    () => "no catalog recorded",
  );
  await first.fire("session_shutdown", { reason: "quit" });
}

const ended = (name: string) => ({ code: "session_ended", message: `${name}: this Pi session has ended` });
const failureOf = (promise: Promise<unknown>) =>
  promise.then(
    () => ({ code: undefined, message: "it succeeded" }),
    (error: unknown) => ({ code: errorCode(error), message: (error as Error).message }),
  );

describe("the Pi entry over one session", () => {
  it("a known tool called after its session ended, before the rest loaded, fails with session_ended", async () => {
    await recordCatalog();
    const pi = fakePi();
    piMcp(pi.pi);
    expect(pi.tools.has("mcp__basic__echo")).toBe(true); // registered from the known catalog while Pi loads the extension
    await pi.fire("session_shutdown", { reason: "quit" });
    expect(await failureOf(pi.call("mcp__basic__echo", { text: "hi" }))).toEqual(ended("mcp__basic__echo"));
    expect(childServers()).toEqual([]);
  });

  it("a row drawn before the core loaded is drawn again by its tool's own renderers once the core registers the tool", async () => {
    const pi = fakePi();
    piMcp(pi.pi);
    const draws = pi.drawRow("mcp__basic__echo"); // from the transcript: no such tool yet, and no known catalog
    await pi.command("help"); // loads the core, whose rendering of earlier rows redraws the row
    await until(
      () => draws() >= 2,
      30_000,
      () => "the row was not drawn again once the core loaded",
    );
    expect(pi.ownDraws.get("mcp__basic__echo")).toBeUndefined();
    await pi.fire("session_start", { reason: "startup" });
    await until(
      () => (pi.ownDraws.get("mcp__basic__echo") ?? 0) > 0,
      30_000,
      () => `the row was not drawn by the tool's own renderers (tools: ${[...pi.tools.keys()].join(", ")}; draws: ${draws()})`,
    );
    await pi.fire("session_shutdown", { reason: "quit" });
  });

  it("a known tool's call loads the rest and runs; after session_shutdown the server is gone and the tool says the session ended", async () => {
    await recordCatalog();
    const pi = fakePi();
    piMcp(pi.pi);
    await pi.fire("session_start", { reason: "startup" });
    const result = (await pi.call("mcp__basic__echo", { text: "hi" })) as { content: { type: string; text?: string }[] };
    expect(result.content).toEqual([{ type: "text", text: "hi" }]);
    expect(childServers().length).toBe(1);
    await pi.fire("session_shutdown", { reason: "quit" });
    expect(childServers()).toEqual([]);
    expect(await failureOf(pi.call("mcp__basic__echo", { text: "again" }))).toEqual(ended("mcp__basic__echo"));
  });
});
