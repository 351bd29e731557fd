// The first model request of a run without a terminal UI (print, JSON, RPC) in a real Pi with the faux
// model: where no known catalog covers every eager server, the first agent start waits (bounded by
// firstRequestWaitMs) for them, so that request carries their tools; a server that never answers
// delays it by the bound at most and is left out; lazy servers and servers that need an authorization
// are not waited for; the catalogs of the servers that did connect are kept for the next start.
import { once } from "node:events";
import { readFile, readdir, writeFile } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fixturePath } from "../helpers/servers.ts";
import { startPiTui } from "../helpers/tui.ts";
import {
  FAUX_PROVIDER,
  NODE,
  PI_VERSIONS,
  readFauxLog,
  REPO_ROOT,
  runPi,
  startPiRpc,
  usePiHome,
  type FauxLogEntry,
  type PiRunResult,
} from "./harness/pi.ts";

const home = usePiHome();
const AGENT_START_PROBE = join(REPO_ROOT, "test/e2e/fixtures/agent-start-probe.ts");
const HOST_START_PROBE = join(REPO_ROOT, "test/e2e/fixtures/host-start-probe.ts");
/** How late the first request may come after its bound: Pi's own work between the agent start and the request, on a busy machine. */
const SLACK_MS = 2_000;
/** A bound only a stuck machine reaches, for tests about what the first request carries (not about the bound). */
const PATIENT = { firstRequestWaitMs: 30_000, connectTimeoutMs: 60_000 };

/** A `catalog` fixture server offering `count` tools named `<prefix>_<i>`, answering after `startDelayMs`. */
async function catalogServer(name: string, count: number, startDelayMs = 0, extra: Record<string, unknown> = {}) {
  const file = join(home.home, `${name}-tools.json`);
  const tools = Array.from({ length: count }, (_, i) => ({ name: `${name}_${i}`, description: `Tool ${i} of ${name}.` }));
  await writeFile(file, JSON.stringify({ label: name, instructions: `Server ${name} guidance.`, startDelayMs, tools }));
  return { command: NODE, args: [fixturePath("catalog")], environment: { FIXTURE_TOOLS_FILE: file }, ...extra };
}

/** A server that never answers `initialize`. */
const silentServer = () => ({ command: NODE, args: [fixturePath("hang")], environment: { FIXTURE_HANG: "initialize" } });

const mcpTools = (request: FauxLogEntry | undefined) => (request?.toolNames ?? []).filter((name) => name.startsWith("mcp__")).sort();
const toolsOf = (server: string, count: number) => Array.from({ length: count }, (_, i) => `mcp__${server}__${server}_${i}`).sort();

function run(args: string[], options: Partial<Parameters<typeof runPi>[0]> = {}): Promise<PiRunResult> {
  return runPi({
    home: home.home,
    cwd: home.cwd,
    extensions: [AGENT_START_PROBE, REPO_ROOT],
    args,
    env: { AGENT_START_EVENTS: join(home.home, "agent-starts.jsonl") },
    script: [{ text: "ok" }],
    timeoutMs: 60_000,
    ...options,
  });
}

/** When each agent start of the runs so far began (the probe's lines). */
function agentStarts(): Promise<number[]> {
  return eventTimes(join(home.home, "agent-starts.jsonl"));
}

/** The times of a probe's lines in `file`. */
async function eventTimes(file: string): Promise<number[]> {
  const text = await readFile(file, "utf8").catch(() => "");
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { at: number }).at);
}

describe("a first start without a terminal UI and without known catalogs", () => {
  it.each(PI_VERSIONS)(
    "pi -p has every tool of five eager servers of 20 tools, and their instructions, in its first request (Pi %s)",
    async (version) => {
      const names = ["one", "two", "three", "four", "five"];
      const servers = Object.fromEntries(await Promise.all(names.map(async (name) => [name, await catalogServer(name, 20)] as const)));
      await home.writeSettings({ mcp: { ...PATIENT, servers } });
      const result = await run(["-p", "hi"], { version });
      expect(result.code, result.stderr).toBe(0);
      expect(mcpTools(result.requests[0]), result.stderr).toEqual(names.flatMap((name) => toolsOf(name, 20)).sort());
      for (const name of names) expect(result.requests[0]!.systemPrompt).toContain(`Server ${name} guidance.`);
    },
  );

  it("in JSON mode the first request has every tool of eager servers", async () => {
    const servers = { one: await catalogServer("one", 20), two: await catalogServer("two", 20, 500) };
    await home.writeSettings({ mcp: { ...PATIENT, servers } });
    const result = await run(["--mode", "json", "hi"]);
    expect(result.code, result.stderr).toBe(0);
    expect(mcpTools(result.requests[0]), result.stderr).toEqual([...toolsOf("one", 20), ...toolsOf("two", 20)].sort());
  });

  it("a server that never answers delays the first request by firstRequestWaitMs at most after pi-mcp started it, and that request goes without its tools; pi-mcp's own start-up before it does not use up that time", async () => {
    const bound = 6_000;
    // A plugin that takes 1.5 s to set up when the host starts: no server starts before it is done.
    const setup = 1_500;
    await home.writeSettings({ mcp: { firstRequestWaitMs: bound, servers: { silent: silentServer() } } });
    const hostStarts = join(home.home, "host-starts.jsonl");
    const result = await run(["-p", "hi"], {
      extensions: [AGENT_START_PROBE, HOST_START_PROBE, REPO_ROOT],
      env: { AGENT_START_EVENTS: join(home.home, "agent-starts.jsonl"), HOST_START_EVENTS: hostStarts, HOST_START_DELAY_MS: String(setup) },
    });
    expect(result.code, result.stderr).toBe(0);
    const [startedAt] = await agentStarts();
    const [serversStartedAt] = await eventTimes(hostStarts);
    const requestAt = result.requests[0]!.at;
    // The server had its whole bound from when the host started it, not what was left of it once pi-mcp had started.
    expect(requestAt - serversStartedAt!).toBeGreaterThanOrEqual(bound);
    expect(requestAt - serversStartedAt!).toBeLessThan(bound + SLACK_MS);
    expect(requestAt - startedAt!).toBeGreaterThanOrEqual(setup + bound);
    expect(mcpTools(result.requests[0])).toEqual([]);
  });

  it("a start-up of pi-mcp that takes longer than firstRequestWaitMs still has the servers' tools in the first request", async () => {
    // A plugin that takes 9 s to set up when the host starts (hostStart's own deadline is 10 s): longer than the wait.
    await home.writeSettings({
      mcp: { firstRequestWaitMs: 8_000, connectTimeoutMs: 30_000, servers: { fast: await catalogServer("fast", 2) } },
    });
    const result = await run(["-p", "hi"], {
      extensions: [AGENT_START_PROBE, HOST_START_PROBE, REPO_ROOT],
      env: { AGENT_START_EVENTS: join(home.home, "agent-starts.jsonl"), HOST_START_DELAY_MS: "9000" },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(mcpTools(result.requests[0])).toEqual(toolsOf("fast", 2));
  });

  it("pi-mcp's own start-up is bounded by connectTimeoutMs: when it takes longer, the first request goes at that bound, without the servers", async () => {
    const bound = 4_000;
    await home.writeSettings({
      mcp: { firstRequestWaitMs: 3_000, connectTimeoutMs: bound, servers: { fast: await catalogServer("fast", 1) } },
    });
    const result = await run(["-p", "hi"], {
      extensions: [AGENT_START_PROBE, HOST_START_PROBE, REPO_ROOT],
      env: { AGENT_START_EVENTS: join(home.home, "agent-starts.jsonl"), HOST_START_DELAY_MS: "8000" },
    });
    expect(result.code, result.stderr).toBe(0);
    const [startedAt] = await agentStarts();
    const delay = result.requests[0]!.at - startedAt!;
    expect(delay).toBeGreaterThanOrEqual(bound);
    expect(delay).toBeLessThan(bound + SLACK_MS);
    expect(mcpTools(result.requests[0])).toEqual([]);
  });

  it("a run that ends before every server settled keeps the catalogs of those that connected: the next start offers them at once and waits only for the others", async () => {
    const settings = async () => ({
      mcp: {
        ...PATIENT,
        firstRequestWaitMs: 12_000,
        servers: { fast: await catalogServer("fast", 3), slowish: await catalogServer("slowish", 2, 800), silent: silentServer() },
      },
    });
    await home.writeSettings(await settings());
    const first = await run(["-p", "hi"]);
    expect(first.code, first.stderr).toBe(0);
    expect(mcpTools(first.requests[0])).toEqual([...toolsOf("fast", 3), ...toolsOf("slowish", 2)].sort());
    const catalogs = (await readdir(join(home.agentDir, "pi-mcp/catalogs"))).filter((name) => name !== "index.json");
    expect(catalogs).toHaveLength(2);
    // Its record says it lacks a server the first request waits for.
    const index = JSON.parse(await readFile(join(home.agentDir, "pi-mcp/catalogs/index.json"), "utf8")) as {
      starts: { complete?: true }[];
    };
    expect(index.starts.map((start) => start.complete)).toEqual([undefined]);

    // The same settings; now "fast" does not answer during the run either: only its record can offer its tools.
    await home.writeSettings(await settings());
    await writeFile(
      join(home.home, "fast-tools.json"),
      JSON.stringify({ label: "fast", startDelayMs: 120_000, tools: toolsOf("fast", 3).map((name) => ({ name: name.split("__")[2] })) }),
    );
    const second = await run(["-p", "hi"]);
    expect(second.code, second.stderr).toBe(0);
    expect(mcpTools(second.requests[0])).toEqual([...toolsOf("fast", 3), ...toolsOf("slowish", 2)].sort());
  });

  it("does not wait for a lazy server or a server that needs an OAuth authorization first: the first request comes at once", async () => {
    // A loopback HTTP endpoint that accepts connections and never answers.
    const sockets = new Set<Socket>();
    const mute: Server = createServer((socket) => void sockets.add(socket));
    mute.listen(0, "127.0.0.1");
    await once(mute, "listening");
    const port = (mute.address() as { port: number }).port;
    try {
      await home.writeSettings({
        mcp: {
          firstRequestWaitMs: 20_000,
          connectTimeoutMs: 30_000,
          servers: {
            later: { ...silentServer(), lifecycle: "lazy" },
            remote: { url: `http://127.0.0.1:${port}/mcp`, auth: { type: "oauth" } },
            fast: await catalogServer("fast", 1),
          },
        },
      });
      const result = await run(["-p", "hi"]);
      expect(result.code, result.stderr).toBe(0);
      const [startedAt] = await agentStarts();
      expect(result.requests[0]!.at - startedAt!).toBeLessThan(10_000);
      expect(mcpTools(result.requests[0])).toEqual(toolsOf("fast", 1));
    } finally {
      for (const socket of sockets) socket.destroy();
      mute.close();
    }
  });

  it("in RPC mode the first prompt's request carries the tools of a server that takes a second to start, and a later prompt does not wait", async () => {
    await home.writeSettings({ mcp: { ...PATIENT, servers: { slowish: await catalogServer("slowish", 4, 1_000) } } });
    const rpc = await startPiRpc({
      home: home.home,
      cwd: home.cwd,
      extensions: [AGENT_START_PROBE, REPO_ROOT],
      env: { AGENT_START_EVENTS: join(home.home, "agent-starts.jsonl") },
      script: [{ text: "one" }, { text: "two" }],
    });
    try {
      await rpc.prompt("first");
      expect(mcpTools(rpc.requests()[0])).toEqual(toolsOf("slowish", 4));
      await rpc.prompt("second");
      expect(rpc.requests()).toHaveLength(2);
    } finally {
      await rpc.close();
    }
  });

  it('pi -p "/mcp wait" "…" still waits in the command and the prompt finds everything settled', async () => {
    await home.writeSettings({ mcp: { servers: { slowish: await catalogServer("slowish", 2, 1_000) } } });
    const result = await run(["-p", "/mcp wait", "hi"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/slowish: connected/);
    expect(mcpTools(result.requests[0])).toEqual(toolsOf("slowish", 2));
  });

  it("firstRequestWaitMs 0 turns the wait off: the first request goes without the servers still starting", async () => {
    await home.writeSettings({ mcp: { firstRequestWaitMs: 0, servers: { slowish: await catalogServer("slowish", 2, 3_000) } } });
    const result = await run(["-p", "hi"]);
    expect(result.code, result.stderr).toBe(0);
    expect(mcpTools(result.requests[0])).toEqual([]);
  });
});

describe("the interactive TUI", () => {
  it("never waits: the first frame takes input while a server is still connecting, and the first prompt's request comes at once, without that server", async () => {
    await home.writeSettings({
      theme: "dark",
      mcp: {
        firstRequestWaitMs: 20_000,
        connectTimeoutMs: 30_000,
        servers: { silent: silentServer(), fast: await catalogServer("fast", 1) },
      },
    });
    const log = join(home.home, "faux-tui.jsonl");
    const scriptFile = join(home.home, "faux-tui-script.json");
    await writeFile(scriptFile, JSON.stringify([{ text: "answered in the TUI" }]));
    const pi = await startPiTui({
      home,
      args: ["-e", AGENT_START_PROBE, "-e", REPO_ROOT, "-e", FAUX_PROVIDER, "--provider", "faux", "--model", "faux-1"],
      env: { PI_MCP_FAUX_SCRIPT: scriptFile, PI_MCP_FAUX_LOG: log, AGENT_START_EVENTS: join(home.home, "agent-starts.jsonl") },
    });
    try {
      // The first frame: the editor, ready for input, while "silent" is still connecting (it never answers).
      await pi.waitFor("the editor", (shown) => shown.split("\n").filter((line) => line.startsWith("───")).length >= 2);
      await pi.submit("hello");
      await pi.waitFor("the answer", (shown) => shown.includes("answered in the TUI"));
      const [request] = readFauxLog(log);
      const [startedAt] = await agentStarts();
      expect(request!.at - startedAt!).toBeLessThan(5_000);
      expect(mcpTools(request).some((name) => name.startsWith("mcp__silent__"))).toBe(false);
      // Typing goes on while the server connects: the next line reaches the editor as typed.
      await pi.submit("/mcp status");
      await pi.waitFor("the status", (shown) => /silent: connecting/.test(shown));
    } finally {
      await pi.stop();
    }
  }, 60_000);
});
