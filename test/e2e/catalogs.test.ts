// Persisted catalogs in a real Pi (print mode, the faux model): the tools of every server whose
// catalog a session with the same settings recorded are in Pi's first request, a call of one runs
// once its server connected, and nothing stale survives reconciliation or reaches another server.
import { chmod, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fixtureEvents, fixturePath, startHttpFixture, type RunningServer } from "../helpers/servers.ts";
import { eventually, isAlive, until } from "../helpers/host.ts";
import { mcpInRpc, NODE, PI_VERSIONS, REPO_ROOT, runPi, startPiRpc, usePiHome, type FauxLogEntry, type PiRunResult } from "./harness/pi.ts";

const home = usePiHome();
const CAPABILITY_PROBE = join(REPO_ROOT, "test/e2e/fixtures/capability-probe.ts");

interface ToolSpec {
  readonly label: string;
  readonly instructions?: string;
  /** How long the server waits before it answers anything (read at its start, so it can change between runs). */
  readonly startDelayMs?: number;
  /** The server writes this to stderr and exits with code 3 at its start. */
  readonly failStart?: string;
  readonly tools: readonly { name: string; description?: string }[];
}

/** Writes what the `catalog` fixture offers (read when it starts): the file stays where the settings name it. */
async function offer(name: string, spec: ToolSpec): Promise<string> {
  const file = join(home.home, `${name}-tools.json`);
  await writeFile(file, JSON.stringify(spec));
  return file;
}

/** A `catalog` fixture server reading its tools from `toolsFile` and logging to `events`. */
function catalogServer(toolsFile: string, events: string, environment: Record<string, string> = {}) {
  return {
    command: NODE,
    args: [fixturePath("catalog")],
    environment: { FIXTURE_TOOLS_FILE: toolsFile, FIXTURE_EVENTS: events, ...environment },
  };
}

const catalogsDir = () => join(home.agentDir, "pi-mcp/catalogs");

function run(args: string[], options: Partial<Parameters<typeof runPi>[0]> = {}): Promise<PiRunResult> {
  return runPi({ home: home.home, cwd: home.cwd, extensions: [REPO_ROOT], args, timeoutMs: 60_000, ...options });
}

/** A first run that waits for every server, so its catalogs are recorded when it ends. */
async function recordCatalogs(options: Partial<Parameters<typeof runPi>[0]> = {}): Promise<void> {
  const first = await run(["-p", "/mcp wait", "hi"], { script: [{ text: "ok" }], ...options });
  expect(first.code, first.stderr).toBe(0);
}

const mcpTools = (request: FauxLogEntry | undefined) => (request?.toolNames ?? []).filter((name) => name.startsWith("mcp__")).sort();
const toolResultTexts = (request: FauxLogEntry | undefined) =>
  (request?.messages ?? [])
    .filter((message) => message.role === "toolResult")
    .map((message) => message.content.map((item: { text?: string }) => item.text ?? "").join(""));

describe("a session with the settings of an earlier one", () => {
  it.each(PI_VERSIONS)(
    "has every tool of a server that takes 3 s to start in its first request, and a call of one in that first turn returns its result without /mcp wait (Pi %s)",
    async (version) => {
      const events = join(home.home, "events.jsonl");
      const tools = await offer("slow", {
        label: "slow",
        instructions: "Search before you fetch.",
        tools: [{ name: "search" }, { name: "fetch" }],
      });
      await home.writeSettings({ mcp: { servers: { slow: catalogServer(tools, events, { FIXTURE_START_DELAY_MS: "3000" }) } } });
      await recordCatalogs({ version });

      const second = await run(["-p", "find it"], {
        version,
        script: [
          { toolCall: { name: "mcp__slow__search", arguments: { text: "needle" } } },
          { textFromLastToolResult: true, prefix: "got: " },
        ],
      });
      expect(second.code, second.stderr).toBe(0);
      expect(mcpTools(second.requests[0])).toEqual(["mcp__slow__fetch", "mcp__slow__search"]);
      expect(second.requests[0]!.systemPrompt).toContain("Search before you fetch.");
      expect(second.stdout).toContain('got: slow/search {"text":"needle"}');
      // The call was answered by the server process this run started, once it had started.
      const started = (await fixtureEvents(events)).filter((event) => event.event === "start");
      const call = (await fixtureEvents(events)).find((event) => event.event === "call");
      expect(call?.pid).toBe(started.at(-1)?.pid);
    },
  );

  it("whose servers' definitions are identical apart from their names has every server's known tools in its first request", async () => {
    const events = join(home.home, "events.jsonl");
    const tools = await offer("twin", { label: "twin", instructions: "Twins answer alike.", tools: [{ name: "echo" }, { name: "ping" }] });
    const twin = catalogServer(tools, events);
    await home.writeSettings({ mcp: { servers: { alpha: twin, beta: twin, gamma: twin } } });
    await recordCatalogs();
    expect((await readdir(catalogsDir())).filter((name) => name !== "index.json")).toHaveLength(3);
    // Every server is in the record: a first request with these settings waits for none.
    const index = JSON.parse(await readFile(join(catalogsDir(), "index.json"), "utf8")) as { starts: { complete?: true }[] };
    expect(index.starts.map((start) => start.complete)).toEqual([true]);
    // The same settings, but now no server answers during this run: only their recorded catalogs can offer their tools.
    await offer("twin", { label: "twin", startDelayMs: 120_000, tools: [{ name: "echo" }, { name: "ping" }] });
    const second = await run(["-p", "hi"], { script: [{ text: "ok" }] });
    expect(second.code, second.stderr).toBe(0);
    expect(mcpTools(second.requests[0])).toEqual(
      ["alpha", "beta", "gamma"].flatMap((server) => [`mcp__${server}__echo`, `mcp__${server}__ping`]),
    );
    expect(second.requests[0]!.systemPrompt).toContain("Twins answer alike.");
  });

  it("answers a call of a known tool whose server fails to start with the server's cause", async () => {
    const events = join(home.home, "events.jsonl");
    const tools = await offer("srv", { label: "srv", tools: [{ name: "ping" }] });
    await home.writeSettings({ mcp: { retry: { maxRetries: 0 }, servers: { srv: catalogServer(tools, events) } } });
    await recordCatalogs();
    await offer("srv", { label: "srv", failStart: "cannot open the database /var/db/srv.sqlite", tools: [{ name: "ping" }] });
    const second = await run(["-p", "go"], {
      script: [{ toolCall: { name: "mcp__srv__ping", arguments: {} } }, { textFromLastToolResult: true, prefix: "got: " }],
    });
    expect(second.code, second.stderr).toBe(0);
    expect(mcpTools(second.requests[0])).toEqual(["mcp__srv__ping"]);
    expect(second.stdout).toMatch(/got: .*exited with code 3.*cannot open the database \/var\/db\/srv\.sqlite/s);
  });

  it("answers a call of a known tool whose server does not answer in connectTimeoutMs with that timeout, once it is over", async () => {
    const events = join(home.home, "events.jsonl");
    const tools = await offer("srv", { label: "srv", tools: [{ name: "ping" }] });
    await home.writeSettings({
      mcp: { retry: { maxRetries: 0 }, servers: { srv: { ...catalogServer(tools, events), connectTimeoutMs: 2_000 } } },
    });
    await recordCatalogs();
    await offer("srv", { label: "srv", startDelayMs: 120_000, tools: [{ name: "ping" }] });
    const second = await run(["-p", "go"], {
      script: [{ toolCall: { name: "mcp__srv__ping", arguments: {} } }, { textFromLastToolResult: true, prefix: "got: " }],
    });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toMatch(/got: .*took longer than 2000 ms \(connectTimeoutMs\)/s);
    expect(second.durationMs).toBeLessThan(60_000);
  });

  it("offers what the server lists now once it connected: unchanged tools stay, a changed one is registered again, a new one is added, a dropped one is withdrawn and its call fails saying so", async () => {
    const events = join(home.home, "events.jsonl");
    const tools = await offer("srv", {
      label: "v1",
      tools: [{ name: "keep" }, { name: "change", description: "Old words." }, { name: "drop" }],
    });
    await home.writeSettings({ mcp: { servers: { srv: catalogServer(tools, events, { FIXTURE_START_DELAY_MS: "1000" }) } } });
    await recordCatalogs();
    // Same settings, but the server offers something else now.
    await offer("srv", { label: "v2", tools: [{ name: "keep" }, { name: "change", description: "New words." }, { name: "add" }] });

    const second = await run(["-p", "go"], {
      script: [
        { toolCall: { name: "mcp__srv__drop", arguments: {} } },
        { toolCall: { name: "mcp__srv__keep", arguments: { text: "k" } } },
        { textFromLastToolResult: true, prefix: "got: " },
      ],
    });
    expect(second.code, second.stderr).toBe(0);
    // The first request is what the earlier session recorded; from the second on, the live catalog.
    expect(mcpTools(second.requests[0])).toEqual(["mcp__srv__change", "mcp__srv__drop", "mcp__srv__keep"]);
    expect(mcpTools(second.requests[1])).toEqual(["mcp__srv__add", "mcp__srv__change", "mcp__srv__keep"]);
    expect(second.requests[1]!.tools.find((tool) => tool.name === "mcp__srv__change")?.description).toBe("New words.");
    expect(toolResultTexts(second.requests[1])[0]).toMatch(
      /mcp__srv__drop is not offered any more: server "srv" no longer lists tool "drop"/,
    );
    expect(second.stdout).toContain('got: v2/keep {"text":"k"}');
    // The dropped tool's call never reached the server.
    expect((await fixtureEvents(events)).filter((event) => event.event === "call").map((event) => event.tool)).toEqual(["keep"]);
  });

  it("whose server definition changed offers none of the old server's tools, and the new server gets no call of them", async () => {
    const oldEvents = join(home.home, "old.jsonl");
    const newEvents = join(home.home, "new.jsonl");
    const oldTools = await offer("old", { label: "old", tools: [{ name: "lookup" }] });
    await home.writeSettings({ mcp: { servers: { docs: catalogServer(oldTools, oldEvents) } } });
    await recordCatalogs();
    const newTools = await offer("new", { label: "new", tools: [{ name: "other" }] });
    await home.writeSettings({ mcp: { servers: { docs: catalogServer(newTools, newEvents, { FIXTURE_START_DELAY_MS: "500" }) } } });

    const second = await run(["-p", "/mcp wait", "go"], {
      script: [{ toolCall: { name: "mcp__docs__lookup", arguments: {} } }, { textFromLastToolResult: true }],
    });
    expect(second.code, second.stderr).toBe(0);
    for (const request of second.requests) expect(mcpTools(request)).toEqual(["mcp__docs__other"]);
    expect((await fixtureEvents(newEvents)).filter((event) => event.event === "call")).toEqual([]);
    expect((await fixtureEvents(oldEvents)).filter((event) => event.event === "start")).toHaveLength(1); // run 1 only
  });

  it("whose server was removed offers none of its tools and never starts it", async () => {
    const goneEvents = join(home.home, "gone.jsonl");
    const stayEvents = join(home.home, "stay.jsonl");
    const gone = catalogServer(await offer("gone", { label: "gone", tools: [{ name: "vanish" }] }), goneEvents);
    const stay = catalogServer(await offer("stay", { label: "stay", tools: [{ name: "remain" }] }), stayEvents);
    await home.writeSettings({ mcp: { servers: { gone, stay } } });
    await recordCatalogs();
    await home.writeSettings({ mcp: { servers: { stay } } });

    const second = await run(["-p", "go"], {
      script: [{ toolCall: { name: "mcp__gone__vanish", arguments: {} } }, { textFromLastToolResult: true }],
    });
    expect(second.code, second.stderr).toBe(0);
    for (const request of second.requests) expect(mcpTools(request)).not.toContain("mcp__gone__vanish");
    expect((await fixtureEvents(goneEvents)).map((event) => event.event)).toEqual(["start"]); // run 1's start; no call, no second start
  });

  describe("whose authentication changed", () => {
    let server: RunningServer | undefined;
    afterEach(async () => {
      await server?.stop();
      server = undefined;
    });

    it("offers no tool recorded with the old credentials, and sends only the new ones", async () => {
      server = await startHttpFixture("http-basic");
      const remote = { url: server.url, auth: { type: "bearer", token: "${REMOTE_TOKEN}" } };
      // No first-request wait: only the recorded catalogs could put tools in the first request.
      await home.writeSettings({ mcp: { firstRequestWaitMs: 0, servers: { remote } } });
      await recordCatalogs({ env: { REMOTE_TOKEN: "old-token-1111" } });
      const recorded = (await readdir(catalogsDir())).filter((name) => name !== "index.json");
      expect(recorded).toHaveLength(1);

      const second = await run(["-p", "go"], { env: { REMOTE_TOKEN: "new-token-2222" }, script: [{ text: "fine" }] });
      expect(second.code, second.stderr).toBe(0);
      expect(mcpTools(second.requests[0])).toEqual([]);
      // No resolved value is ever stored: neither token appears in any file the cache keeps.
      for (const name of await readdir(catalogsDir())) {
        const text = await readFile(join(catalogsDir(), name), "utf8");
        expect(text).not.toContain("old-token-1111");
        expect(text).not.toContain("new-token-2222");
      }
    });
  });

  it("whose server's catalog identity changed (another extension changed the declared capabilities) withdraws its recorded tools before any call, and their call fails without reaching the server", async () => {
    const events = join(home.home, "events.jsonl");
    const tools = await offer("srv", { label: "srv", tools: [{ name: "ping" }] });
    await home.writeSettings({ mcp: { servers: { srv: catalogServer(tools, events, { FIXTURE_START_DELAY_MS: "1500" }) } } });
    await recordCatalogs();

    // The same settings (so the entry offers the recorded tools), but clients now declare another capability.
    const second = await run(["-p", "go"], {
      extensions: [REPO_ROOT, CAPABILITY_PROBE],
      script: [{ toolCall: { name: "mcp__srv__ping", arguments: {} } }, { textFromLastToolResult: true, prefix: "got: " }],
    });
    expect(second.code, second.stderr).toBe(0);
    expect(mcpTools(second.requests[0])).toEqual(["mcp__srv__ping"]);
    expect(second.stdout).toMatch(
      /got: .*mcp__srv__ping is not offered any more: its tool list was recorded for settings or credentials of server "srv" that have changed since/,
    );
    expect((await fixtureEvents(events)).filter((event) => event.event === "call")).toEqual([]);
  });
});

describe("the catalog files", () => {
  it("never hold a resolved secret: a server whose instructions carry one is not recorded, and neither is the system prompt text", async () => {
    const secret = "sk-live-7f3a9c2e1b";
    const leaky = await offer("leaky", {
      label: "leaky",
      instructions: `Use the key ${secret} for every call.`,
      tools: [{ name: "spill" }],
    });
    const clean = await offer("clean", { label: "clean", instructions: "Be brief.", tools: [{ name: "tidy" }] });
    const leakyServer = catalogServer(leaky, join(home.home, "leaky.jsonl"));
    await home.writeSettings({
      mcp: {
        firstRequestWaitMs: 0, // only the recorded catalogs could put tools in the first request
        servers: {
          leaky: { ...leakyServer, environment: { ...leakyServer.environment, API_KEY: "${API_KEY}" } },
          clean: catalogServer(clean, join(home.home, "clean.jsonl")),
        },
      },
    });
    await recordCatalogs({ env: { API_KEY: secret } });
    for (const name of await readdir(catalogsDir())) expect(await readFile(join(catalogsDir(), name), "utf8"), name).not.toContain(secret);
    const second = await run(["-p", "hi"], { env: { API_KEY: secret }, script: [{ text: "ok" }] });
    expect(second.code, second.stderr).toBe(0);
    expect(mcpTools(second.requests[0])).not.toContain("mcp__leaky__spill");
  });

  it("a broken index, a truncated catalog or a catalog readable by others is ignored, Pi runs as without them, and they are written anew", async () => {
    const events = join(home.home, "events.jsonl");
    const tools = await offer("srv", { label: "srv", tools: [{ name: "ping" }] });
    // No first-request wait: only the recorded catalogs could put tools in the first request. The slow server's 3 s
    // come on top of its start, which a loaded machine makes slow too: its connect may take longer than the default 10 s.
    await home.writeSettings({ mcp: { firstRequestWaitMs: 0, connectTimeoutMs: 60_000, servers: { srv: catalogServer(tools, events) } } });
    const index = join(catalogsDir(), "index.json");
    const catalogFile = async () => join(catalogsDir(), (await readdir(catalogsDir())).find((name) => name !== "index.json")!);
    const damages: Array<[string, () => Promise<void>]> = [
      ["a broken index", () => writeFile(index, "{ not json")],
      ["a truncated catalog", async () => writeFile(await catalogFile(), (await readFile(await catalogFile(), "utf8")).slice(0, 40))],
      ["a catalog readable by others", async () => chmod(await catalogFile(), 0o644)],
    ];
    await recordCatalogs();
    for (const [damage, apply] of damages) {
      await apply();
      // The server is slow now: the first request comes before it answers, so only a cache could have put its tool there.
      await offer("srv", { label: "srv", startDelayMs: 3_000, tools: [{ name: "ping" }] });
      const damaged = await run(["-p", "hi", "/mcp wait", "again"], { script: [{ text: "ok" }, { text: "ok" }] });
      expect(damaged.code, `${damage}: ${damaged.stderr}`).toBe(0);
      expect(mcpTools(damaged.requests[0]), damage).toEqual([]);
      expect(mcpTools(damaged.requests[1]), damage).toEqual(["mcp__srv__ping"]);
      // Written anew: the next run has the tool in its first request again.
      const next = await run(["-p", "hi"], { script: [{ text: "ok" }] });
      expect(mcpTools(next.requests[0]), damage).toEqual(["mcp__srv__ping"]);
    }
  });

  it("three Pi processes writing at once keep each one's record: each runs again with its own tools in its first request", async () => {
    const events = join(home.home, "events.jsonl");
    // One definition; each process's environment decides which tool list the server reads.
    await home.writeSettings({ mcp: { servers: { srv: catalogServer("${TOOLS_FILE}", events) } } });
    const files = await Promise.all(["a", "b", "c"].map((label) => offer(label, { label, tools: [{ name: `tool_${label}` }] })));
    const first = await Promise.all(
      files.map((file) => run(["-p", "/mcp wait", "hi"], { env: { TOOLS_FILE: file }, script: [{ text: "ok" }] })),
    );
    for (const result of first) expect(result.code, result.stderr).toBe(0);
    const index = JSON.parse(await readFile(join(catalogsDir(), "index.json"), "utf8")) as { starts: unknown[] };
    expect(index.starts).toHaveLength(3);
    const again = await Promise.all(files.map((file) => run(["-p", "hi"], { env: { TOOLS_FILE: file }, script: [{ text: "ok" }] })));
    expect(again.map((result) => mcpTools(result.requests[0]))).toEqual([["mcp__srv__tool_a"], ["mcp__srv__tool_b"], ["mcp__srv__tool_c"]]);
  });
});

describe("quitting", () => {
  const survivors: number[] = [];
  afterEach(() => {
    for (const pid of survivors.splice(0)) if (isAlive(pid)) process.kill(pid, "SIGKILL");
  });

  it("pi -p ends soon after its answer while ten servers are still starting (even ones that ignore SIGTERM), and leaves none of them running", async () => {
    const events = join(home.home, "events.jsonl");
    const tools = await offer("slow", { label: "slow", tools: [{ name: "ping" }] });
    const servers = Object.fromEntries(
      Array.from({ length: 10 }, (_, i) => [
        `slow${i}`,
        catalogServer(tools, events, { FIXTURE_START_DELAY_MS: "60000", FIXTURE_STUBBORN_START: "1" }),
      ]),
    );
    // No first-request wait: the model's first request comes while the servers still start.
    await home.writeSettings({ mcp: { firstRequestWaitMs: 0, servers } });
    // `/mcp status` loads pi-mcp, which starts every server; the model waits (Pi's bash tool) until all ten
    // processes have started, and answers while they still start.
    const allStarted = `for i in $(seq 600); do [ "$(grep -c '"event":"start"' ${JSON.stringify(events)} 2>/dev/null)" -ge 10 ] && break; sleep 0.1; done`;
    const result = await run(["-p", "/mcp status", "hi"], {
      script: [{ toolCall: { name: "bash", arguments: { command: allStarted } } }, { text: "answered" }],
    });
    const exitedAt = Date.now();
    const started = (await fixtureEvents(events)).filter((event) => event.event === "start");
    survivors.push(...started.map((event) => event.pid));
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("answered");
    expect(started).toHaveLength(10);
    // Closing a server that never answered does not wait the MCP SDK's 2 s for it to notice its closed
    // stdin (and 2 s more after a SIGTERM it ignores): it is killed after a short bound.
    expect(exitedAt - Math.max(...started.map((event) => event.at))).toBeLessThan(3_000);
    expect(started.filter((event) => isAlive(event.pid))).toEqual([]);
  });
});

describe("a replaced session (/reload, new session, fork, resume)", () => {
  const PROBE = join(REPO_ROOT, "test/e2e/harness/fixtures/probe.ts");
  const TOOLS_AT_START = join(REPO_ROOT, "test/e2e/fixtures/tools-at-start.ts");

  it("registers the tools of its retained connections in the next session's extension factory, with no catalog file to read", async () => {
    const events = join(home.home, "events.jsonl");
    const tools = await offer("srv", { label: "srv", tools: [{ name: "alpha" }, { name: "beta" }] });
    await home.writeSettings({ mcp: { servers: { srv: catalogServer(tools, events) } } });
    // No catalog can be written or read (the folder is a file): only the connection pool can hand the tools on.
    await mkdir(join(home.agentDir, "pi-mcp"), { recursive: true });
    await writeFile(catalogsDir(), "not a folder");
    const rpc = await startPiRpc({
      home: home.home,
      cwd: home.cwd,
      extensions: [REPO_ROOT, PROBE, TOOLS_AT_START],
      noSession: false,
      script: [{ text: "ok" }],
    });
    const atStart = () => [...rpc.stderr().matchAll(/\[tools-at-start\] (.*)\n/g)].map((match) => match[1]);
    try {
      await rpc.prompt("/mcp wait");
      expect(atStart()).toEqual([""]);
      await rpc.prompt("/probe_reload");
      await rpc.prompt("/mcp wait");
      expect((await rpc.send({ type: "new_session" })).data).toEqual({ cancelled: false });
      await rpc.prompt("/mcp wait");
      await rpc.prompt("a message to fork from");
      const resumable = (await rpc.send({ type: "get_state" })).data.sessionFile as string;
      const [message] = (await rpc.send({ type: "get_fork_messages" })).data.messages;
      expect((await rpc.send({ type: "fork", entryId: message.entryId })).data).toMatchObject({ cancelled: false });
      await rpc.prompt("/mcp wait");
      // /resume: back to the session the fork came from.
      expect((await rpc.send({ type: "switch_session", sessionPath: resumable })).data).toMatchObject({ cancelled: false });
      await rpc.prompt("/mcp wait");
      const both = "mcp__srv__alpha,mcp__srv__beta";
      expect(atStart()).toEqual(["", both, both, both, both]);
      // One server process all along: the tools came with the retained connection.
      expect((await fixtureEvents(events)).filter((event) => event.event === "start")).toHaveLength(1);
    } finally {
      await rpc.close();
    }
  }, 90_000);
});

describe("a lazy server", () => {
  const lazyServer = (toolsFile: string, events: string, extra: Record<string, unknown> = {}) => ({
    ...catalogServer(toolsFile, events),
    lifecycle: "lazy",
    ...extra,
  });
  const starts = async (events: string) => (await fixtureEvents(events)).filter((event) => event.event === "start");

  it("with a known catalog starts no process until the model calls one of its tools, then answers it; /mcp status and pi-mcp's list say it is lazy", async () => {
    const events = join(home.home, "events.jsonl");
    const tools = await offer("lazy", { label: "lazy", tools: [{ name: "look" }, { name: "find" }] });
    await home.writeSettings({
      mcp: {
        servers: {
          lz: lazyServer(tools, events),
          eager: catalogServer(await offer("eager", { label: "eager", tools: [{ name: "now" }] }), join(home.home, "eager.jsonl")),
        },
      },
    });
    // No catalog yet: it connects once to have one.
    await recordCatalogs();
    expect(await starts(events)).toHaveLength(1);

    const quiet = await run(["-p", "/mcp wait", "hi"], { script: [{ text: "ok" }] });
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stdout).toMatch(/lz: idle, lazy: not running, 2 tools known; the first call starts it/);
    expect(mcpTools(quiet.requests[0])).toEqual(["mcp__eager__now", "mcp__lz__find", "mcp__lz__look"]);
    expect(await starts(events)).toHaveLength(1); // nothing started it

    const called = await run(["-p", "look"], {
      script: [{ toolCall: { name: "mcp__lz__look", arguments: { text: "here" } } }, { textFromLastToolResult: true, prefix: "got: " }],
    });
    expect(called.code, called.stderr).toBe(0);
    expect(called.stdout).toContain('got: lazy/look {"text":"here"}');
    const [, second] = await starts(events);
    expect((await fixtureEvents(events)).find((event) => event.event === "call")?.pid).toBe(second?.pid);

    const listed = await run(["-p", "/mcp list"], { faux: false });
    expect(listed.stdout).toMatch(/^lz\s+global\s+enabled \(lazy\)\s/m);
    expect(listed.stdout).toMatch(/^eager\s+global\s+enabled\s+stdio/m);
  });

  /**
   * `/mcp status` once it says lz is idle: the server's process ends first, and the
   * connection reads idle when its close has finished (some tens of ms later).
   */
  async function idleStatus(rpc: Awaited<ReturnType<typeof startPiRpc>>): Promise<string> {
    let status = "";
    return eventually(
      async () => {
        status = await mcpInRpc(rpc, "status");
        return /lz: idle/.test(status) && status;
      },
      30_000,
      () => `lz never read idle; last status: ${status}`,
    );
  }

  it("closes after idleTimeoutMs without use, shows idle again, and the next call starts it anew", async () => {
    const events = join(home.home, "events.jsonl");
    const tools = await offer("lazy", { label: "lazy", tools: [{ name: "look" }] });
    await home.writeSettings({ mcp: { servers: { lz: lazyServer(tools, events, { idleTimeoutMs: 1_500 }) } } });
    const rpc = await startPiRpc({
      home: home.home,
      cwd: home.cwd,
      extensions: [REPO_ROOT],
      script: [
        { toolCall: { name: "mcp__lz__look", arguments: { text: "one" } } },
        { text: "first done" },
        { toolCall: { name: "mcp__lz__look", arguments: { text: "two" } } },
        { textFromLastToolResult: true, prefix: "got: " },
      ],
    });
    try {
      // No catalog yet: it connects once, then closes when it has been idle long enough.
      await rpc.prompt("/mcp wait");
      const [first] = await starts(events);
      expect(first).toBeDefined();
      await until(
        () => !isAlive(first!.pid),
        30_000,
        () => "the idle lazy server was not closed",
      );
      expect(await idleStatus(rpc)).toMatch(/lz: idle, lazy: not running, 1 tools known/);

      await rpc.prompt("call it");
      const called = await starts(events);
      expect(called).toHaveLength(2);
      await until(
        () => !isAlive(called[1]!.pid),
        30_000,
        () => "the lazy server was not closed after its call",
      );
      expect(await idleStatus(rpc)).toMatch(/lz: idle/);

      await rpc.prompt("again");
      const all = await starts(events);
      expect(all).toHaveLength(3);
      expect((await fixtureEvents(events)).filter((event) => event.event === "call").map((event) => event.pid)).toEqual([
        all[1]!.pid,
        all[2]!.pid,
      ]);
    } finally {
      await rpc.close();
    }
  }, 120_000);
});
