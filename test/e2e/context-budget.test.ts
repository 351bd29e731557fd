// The context budget in a real Pi with the faux model (which records every request): exposure
// `auto` (the default) keeps a small setup direct and a large one within mcp.contextBudget by
// deferring whole servers, the largest first; explicit settings win; the tool definitions are
// byte-identical across turns and across two starts; a model with a smaller context window defers
// more at the next turn (said in one line); a deferred tool is found through tool_search and called.
// In a running session (RPC), what changes during a run (a model switched by set_model, a catalog
// grown through tools/list_changed, a server that arrives) leaves that run's decisions held and is
// decided anew once, at the next run, in one line; the runs after do not move back.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fixturePath } from "../helpers/servers.ts";
import { catalogTokens } from "../../src/runtime/context-budget.ts";
import { eventually } from "../helpers/wait.ts";
import { NODE, REPO_ROOT, mcpInRpc, runPi, startPiRpc, usePiHome, type FauxLogEntry, type FauxStep, type PiVersion } from "./harness/pi.ts";

const EVERYTHING = join(REPO_ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");

const home = usePiHome();

/** Writes `<name>-tools.json` for the `catalog` fixture: `count` tools whose definitions come to about `tokens` estimated tokens in all, and `spec`'s fields. */
async function writeTools(name: string, count: number, tokens: number, spec: Record<string, unknown> = {}): Promise<string> {
  const per = Math.floor(tokens / count);
  const tools = Array.from({ length: count }, (_, i) => {
    const base = { name: `${name}_${i}`, inputSchema: { type: "object" as const, properties: { text: { type: "string" } } } };
    const fixed = catalogTokens([{ ...base, description: "" }], name);
    return { name: base.name, description: `Tool ${i} of ${name}. ${"x".repeat(Math.max(0, (per - fixed) * 4 - 20))}` };
  });
  const file = join(home.home, `${name}-tools.json`);
  await writeFile(file, JSON.stringify({ label: name, tools, ...spec }));
  return file;
}

/** A `catalog` fixture server of `count` tools whose definitions come to about `tokens` estimated tokens in all. */
async function sizedServer(
  name: string,
  count: number,
  tokens: number,
  extra: Record<string, unknown> = {},
  spec: Record<string, unknown> = {},
) {
  const file = await writeTools(name, count, tokens, spec);
  return { command: NODE, args: [fixturePath("catalog")], environment: { FIXTURE_TOOLS_FILE: file }, ...extra };
}

async function settings(mcp: Record<string, unknown>) {
  await writeFile(
    join(home.agentDir, "settings.json"),
    JSON.stringify({ mcp: { connectTimeoutMs: 60_000, firstRequestWaitMs: 30_000, ...mcp } }),
  );
}

function run(prompts: string[], script: FauxStep[], version: PiVersion = "1.6", env: Record<string, string> = {}) {
  return runPi({
    version,
    home: home.home,
    cwd: home.cwd,
    extensions: [REPO_ROOT],
    args: ["-p", ...prompts],
    script,
    env,
    timeoutMs: 90_000,
  });
}

/** The servers whose tools a request declares. */
const declaredServers = (request: FauxLogEntry | undefined) =>
  [...new Set((request?.toolNames ?? []).filter((name) => name.startsWith("mcp__")).map((name) => name.split("__")[1]))].sort();
const mcpDefinitions = (request: FauxLogEntry | undefined) =>
  JSON.stringify(request?.tools.filter((tool) => tool.name.startsWith("mcp__")));

/** Four servers of 16,000 estimated tokens in all: past 10% of the faux window (12,800), within it without `a`. */
async function largeSetup(extra: Record<string, Record<string, unknown>> = {}) {
  return {
    a: await sizedServer("a", 40, 8_000, extra.a),
    b: await sizedServer("b", 25, 5_000, extra.b),
    c: await sizedServer("c", 10, 2_000, extra.c),
    d: await sizedServer("d", 5, 1_000, extra.d),
  };
}

describe("exposure auto (the default)", () => {
  it("keeps a small setup direct: every tool declared, no search line", async () => {
    await settings({ servers: { everything: { command: NODE, args: [EVERYTHING, "stdio"] } } });
    const result = await run(["/mcp wait", "/mcp status", "go"], [{ text: "ok" }]);
    expect(result.code).toBe(0);
    const first = result.requests[0]!;
    expect(first.toolNames).toContain("mcp__everything__echo");
    expect(first.systemPrompt).not.toContain("tool_search");
    expect(result.stdout).toMatch(/ {2}context: auto: direct, [\d,]+ tokens, budget 12,800 of 128,000/);
    expect(result.stdout).toMatch(/^MCP tools: ≈[\d,]+ tokens declared per request, ≈[\d,]+ in all$/m);
  });

  it("keeps a large setup within the budget: the largest server is deferred, one line says how to reach it, its tool is found and called", async () => {
    await settings({ servers: await largeSetup() });
    const result = await run(
      ["/mcp wait", "/mcp status", "go"],
      [
        { toolCall: { name: "tool_search", arguments: { query: "a_7" } } },
        { toolCall: { name: "mcp__a__a_7", arguments: { text: "found" } } },
        { textFromLastToolResult: true },
      ],
    );
    expect(result.code).toBe(0);
    const [first, second, third] = result.requests;
    expect(declaredServers(first)).toEqual(["b", "c", "d"]);
    expect(first!.toolNames).toContain("tool_search");
    expect(first!.systemPrompt).toContain(
      "Some tools of this server (mcp__a__*) are not declared to you: find and load them with tool_search.",
    );
    expect(first!.systemPrompt).not.toContain("mcp__b__*");
    // What the request carries of MCP tools stays within the budget (the estimate counts the definitions as listed).
    expect(Buffer.byteLength(mcpDefinitions(first), "utf8") / 4).toBeLessThan(12_800);
    // tool_search loaded it: declared for the next request of the same turn, and the call ran on the server.
    expect(second!.toolNames).toContain("mcp__a__a_7");
    expect(JSON.stringify(third!.messages.at(-1))).toContain('a/a_7 {\\"text\\":\\"found\\"}');
    expect(result.stdout).toContain('a/a_7 {"text":"found"}');
    expect(result.stdout).toMatch(/a: connected, 40 tools \(40 deferred\)/);
    expect(result.stdout).toMatch(/ {2}context: auto: deferred, [78],\d{3} tokens, budget 12,800 of 128,000/);
    expect(result.stdout).toMatch(/ {2}context: auto: direct, [45],\d{3} tokens, budget 12,800 of 128,000/);
  });

  it("explicit settings win: a server set to direct stays declared, and the budget defers the others instead", async () => {
    await settings({ servers: await largeSetup({ a: { exposure: "direct" }, d: { toolExposure: { d_0: "hidden" } } }) });
    const result = await run(["/mcp wait", "/mcp status", "go"], [{ text: "ok" }]);
    expect(result.code).toBe(0);
    const first = result.requests[0]!;
    expect(declaredServers(first)).toEqual(["a", "c", "d"]);
    expect(first.toolNames).not.toContain("mcp__d__d_0");
    expect(first.toolNames).toContain("mcp__d__d_1");
    expect(result.stdout).toMatch(/ {2}context: direct \(set\), [78],\d{3} tokens/);
    expect(result.stdout).toMatch(/ {2}context: auto: deferred, [45],\d{3} tokens/);
  });

  it("mcp.contextBudget takes an absolute number of tokens", async () => {
    await settings({ contextBudget: 2_500, servers: await largeSetup() });
    const result = await run(["go"], [{ text: "ok" }]);
    expect(result.code).toBe(0);
    // 16,000 in all: a (8,000), b (5,000) and c (2,000) go, the largest first; d (1,000) fits.
    expect(declaredServers(result.requests[0])).toEqual(["d"]);
  });

  it("gives byte-identical tool definitions, in the same order, in every request and in the first request of the next start", async () => {
    await settings({ servers: await largeSetup() });
    const first = await run(["one", "two"], [{ text: "1" }, { text: "2" }]);
    expect(first.code).toBe(0);
    expect(first.requests).toHaveLength(2);
    const tools = JSON.stringify(first.requests[0]!.tools);
    expect(JSON.stringify(first.requests[1]!.tools)).toBe(tools);
    expect(declaredServers(first.requests[0])).toEqual(["b", "c", "d"]);
    const second = await run(["three"], [{ text: "3" }]);
    expect(second.code).toBe(0);
    expect(JSON.stringify(second.requests[0]!.tools)).toBe(tools);
    expect(second.requests[0]!.systemPrompt).toBe(first.requests[0]!.systemPrompt);
  });

  it("a model with a smaller context window defers more at the next turn, said in one line, and nothing moves back", async () => {
    await settings({ servers: await largeSetup() });
    const result = await run(["one", "/faux-model faux-small", "two", "three"], [{ text: "1" }, { text: "2" }, { text: "3" }], "1.6", {
      PI_MCP_FAUX_SMALL_WINDOW: "40000",
    });
    expect(result.code).toBe(0);
    expect(result.requests.map((request) => request.model)).toEqual(["faux-1", "faux-small", "faux-small"]);
    const [one, two, three] = result.requests;
    expect(declaredServers(one)).toEqual(["b", "c", "d"]);
    // 10% of 40,000: 4,000 tokens. b (5,000) goes too; c and d (3,000) fit.
    expect(declaredServers(two)).toEqual(["c", "d"]);
    expect(two!.systemPrompt).toContain("(mcp__b__*) are not declared to you");
    expect(JSON.stringify(three!.tools)).toBe(JSON.stringify(two!.tools));
    expect(result.stderr.match(/decided anew/g)).toHaveLength(1);
    expect(result.stderr).toContain("MCP context budget 4,000 of 40,000 tokens, decided anew: deferred now: b.");
  });

  it("on Pi 0.84, which has no exposure, auto means direct, after one notice", async () => {
    await settings({ servers: await largeSetup() });
    const result = await run(["go"], [{ text: "ok" }], "0.84");
    expect(result.code).toBe(0);
    expect(declaredServers(result.requests[0])).toEqual(["a", "b", "c", "d"]);
    expect(result.stderr.match(/does not support tool exposure/g)).toHaveLength(1);
  });
});

describe("in a running session (RPC), a change is decided anew once, at the next run", () => {
  const rpcPi = (script: FauxStep[]) =>
    startPiRpc({ home: home.home, cwd: home.cwd, extensions: [REPO_ROOT], script, env: { PI_MCP_FAUX_SMALL_WINDOW: "40000" } });
  /** The budget's re-decision lines among `records` (Pi's notices in RPC mode). */
  const redecisions = (records: readonly any[]) =>
    records
      .filter((record) => record.type === "extension_ui_request" && record.method === "notify" && /decided anew/.test(record.message))
      .map((record) => String(record.message));

  it("a model switched by set_model while a run is under way: that run keeps its tools; the next carries fewer direct MCP tools, said in one line; later runs do not move back and reach the deferred tools through tool_search", async () => {
    const gate = join(home.home, "gate");
    await settings({ servers: { ...(await largeSetup()), w: { command: NODE, args: [fixturePath("witness")] } } });
    const rpc = await rpcPi([
      { toolCall: { name: "mcp__w__hold", arguments: { gate } } },
      { text: "1" },
      { text: "2" },
      // The third run reaches a tool of b, declared no more, through tool_search.
      { toolCall: { name: "tool_search", arguments: { query: "b_3" } } },
      { toolCall: { name: "mcp__b__b_3", arguments: { text: "found" } } },
      { textFromLastToolResult: true },
    ]);
    try {
      await mcpInRpc(rpc, "wait");
      const since = rpc.records.length;
      expect((await rpc.send({ type: "prompt", message: "one" })).success).toBe(true);
      await rpc.waitFor((record) => record.type === "tool_execution_start" && record.toolName === "mcp__w__hold", { since });
      expect((await rpc.send({ type: "set_model", provider: "faux", modelId: "faux-small" })).success).toBe(true);
      await writeFile(gate, "");
      await rpc.waitFor((record) => record.type === "agent_settled", { since });
      const one = rpc.records.slice(since);
      const two = await rpc.prompt("two");
      const three = await rpc.prompt("three");
      const requests = rpc.requests();
      expect(requests.map((request) => request.model)).toEqual(["faux-1", ...Array(5).fill("faux-small")]);
      const [first, during, second, third, loaded, answered] = requests;
      expect(declaredServers(first)).toEqual(["b", "c", "d", "w"]);
      // The run under way keeps the tools it started with, though its model changed.
      expect(mcpDefinitions(during)).toBe(mcpDefinitions(first));
      // The next run: 10% of 40,000 is 4,000 tokens; b (5,000) goes too; c, d and w fit.
      expect(declaredServers(second)).toEqual(["c", "d", "w"]);
      expect(second!.systemPrompt).toContain("(mcp__b__*) are not declared to you");
      expect(JSON.stringify(third!.tools)).toBe(JSON.stringify(second!.tools));
      expect(third!.systemPrompt).toBe(second!.systemPrompt);
      // tool_search loaded it for the next request of the same run, and the call ran on the server.
      expect(loaded!.toolNames).toContain("mcp__b__b_3");
      expect(JSON.stringify(answered!.messages.at(-1))).toContain('b/b_3 {\\"text\\":\\"found\\"}');
      expect([redecisions(one), redecisions(two.records), redecisions(three.records)]).toEqual([
        [],
        ["MCP context budget 4,000 of 40,000 tokens, decided anew: deferred now: b."],
        [],
      ]);
      expect(rpc.stderr()).not.toContain("decided anew");
    } finally {
      await rpc.close();
    }
  }, 120_000);

  it("a server whose tools grow (tools/list_changed) during a run stays direct for that run, is deferred at the next, said in one line, and stays so", async () => {
    const gate = join(home.home, "gate");
    await settings({
      servers: {
        grow: await sizedServer("grow", 2, 400, {}, { reloadable: true }),
        b: await sizedServer("b", 25, 5_000),
        c: await sizedServer("c", 10, 2_000),
        d: await sizedServer("d", 5, 1_000),
        w: { command: NODE, args: [fixturePath("witness")] },
      },
    });
    const rpc = await rpcPi([
      { toolCall: { name: "mcp__grow__reload_tools", arguments: {} } },
      { toolCall: { name: "mcp__w__hold", arguments: { gate } } },
      { text: "1" },
      { text: "2" },
      { text: "3" },
    ]);
    /** `/mcp status` once the budget has counted grow's new list (its 41 tools, about 8,000 tokens). */
    const grown = (text: string) => /^grow: connected, 41 tools.*\n {2}context: auto: \w+, [78],\d{3} tokens/m.test(text) && text;
    try {
      await mcpInRpc(rpc, "wait");
      // About 8,700 tokens in all: everything is direct. The server's next list has 40 tools of 8,000 (16,700 in all).
      await writeTools("grow", 40, 8_000, { reloadable: true });
      const since = rpc.records.length;
      expect((await rpc.send({ type: "prompt", message: "one" })).success).toBe(true);
      await rpc.waitFor((record) => record.type === "tool_execution_start" && record.toolName === "mcp__w__hold", { since });
      // Mid-run the new list has reached pi-mcp (it re-lists on the server's notice) and is counted: the run keeps grow direct.
      const held = await eventually(async () => grown(await mcpInRpc(rpc, "status")), 30_000);
      expect(held).toMatch(/^grow: connected, 41 tools, .*\n {2}context: auto: direct, [78],\d{3} tokens/m);
      await writeFile(gate, "");
      await rpc.waitFor((record) => record.type === "agent_settled", { since });
      const one = rpc.records.slice(since);
      // Once the run ended it is decided anew: grow, the largest, is deferred.
      expect(await mcpInRpc(rpc, "status")).toMatch(
        /^grow: connected, 41 tools \(41 deferred\), .*\n {2}context: auto: deferred, [78],\d{3} tokens, budget 12,800 of 128,000$/m,
      );
      const two = await rpc.prompt("two");
      const three = await rpc.prompt("three");
      const requests = rpc.requests();
      expect(requests).toHaveLength(5);
      const [first, , during, second, third] = requests;
      expect(declaredServers(first)).toEqual(["b", "c", "d", "grow", "w"]);
      // The run under way declared grow's new list directly: its decision was held.
      expect(during!.toolNames.filter((name) => name.startsWith("mcp__grow__"))).toHaveLength(41);
      expect(declaredServers(second)).toEqual(["b", "c", "d", "w"]);
      expect(second!.systemPrompt).toContain("(mcp__grow__*) are not declared to you");
      expect(JSON.stringify(third!.tools)).toBe(JSON.stringify(second!.tools));
      expect(third!.systemPrompt).toBe(second!.systemPrompt);
      expect([redecisions(one), redecisions(two.records), redecisions(three.records)]).toEqual([
        [],
        ["MCP context budget 12,800 of 128,000 tokens, decided anew: deferred now: grow."],
        [],
      ]);
      expect(rpc.stderr()).not.toContain("decided anew");
    } finally {
      await rpc.close();
    }
  }, 120_000);

  it("a server that arrives during a run is fitted into what the held decisions leave; after the run all is decided anew, said in one line with it", async () => {
    const gate = join(home.home, "gate");
    await settings({
      servers: {
        a: await sizedServer("a", 40, 8_000),
        b: await sizedServer("b", 30, 6_000),
        c: await sizedServer("c", 10, 2_000),
        d: await sizedServer("d", 5, 1_000),
        e: await sizedServer("e", 25, 5_000, { enabled: false }),
        w: { command: NODE, args: [fixturePath("witness")] },
      },
    });
    const rpc = await rpcPi([{ toolCall: { name: "mcp__w__hold", arguments: { gate } } }, { text: "1" }, { text: "2" }, { text: "3" }]);
    /** `/mcp status` once e's tools are counted in the budget. */
    const counted = (text: string) => /^e: connected, 25 tools.*\n {2}context: auto: \w+, [45],\d{3} tokens/m.test(text) && text;
    try {
      await mcpInRpc(rpc, "wait");
      const since = rpc.records.length;
      expect((await rpc.send({ type: "prompt", message: "one" })).success).toBe(true);
      await rpc.waitFor((record) => record.type === "tool_execution_start" && record.toolName === "mcp__w__hold", { since });
      // b, c, d and w (about 9,300 tokens) are direct and a is deferred; e (5,000) does not fit what is left.
      expect(await mcpInRpc(rpc, "enable e")).toContain('Enabled global server "e"');
      const fitted = await eventually(async () => counted(await mcpInRpc(rpc, "status")), 30_000);
      expect(fitted).toMatch(/^e: connected, 25 tools \(25 deferred\), .*\n {2}context: auto: deferred/m);
      expect(fitted).toMatch(/^b: connected, 30 tools, .*\n {2}context: auto: direct/m);
      await writeFile(gate, "");
      await rpc.waitFor((record) => record.type === "agent_settled", { since });
      const one = rpc.records.slice(since);
      // Decided anew (22,300 in all): a and then b, the largest, are deferred; e fits now.
      const after = await mcpInRpc(rpc, "status");
      expect(after).toMatch(/^b: connected, 30 tools \(30 deferred\), .*\n {2}context: auto: deferred/m);
      expect(after).toMatch(/^e: connected, 25 tools, .*\n {2}context: auto: direct/m);
      const two = await rpc.prompt("two");
      const three = await rpc.prompt("three");
      const requests = rpc.requests();
      expect(requests).toHaveLength(4);
      const [first, during, second, third] = requests;
      expect(declaredServers(first)).toEqual(["b", "c", "d", "w"]);
      expect(declaredServers(during)).toEqual(["b", "c", "d", "w"]);
      expect(declaredServers(second)).toEqual(["c", "d", "e", "w"]);
      expect(second!.systemPrompt).toContain("(mcp__b__*) are not declared to you");
      expect(JSON.stringify(third!.tools)).toBe(JSON.stringify(second!.tools));
      expect(third!.systemPrompt).toBe(second!.systemPrompt);
      expect([redecisions(one), redecisions(two.records), redecisions(three.records)]).toEqual([
        [],
        ["MCP context budget 12,800 of 128,000 tokens, decided anew: deferred now: b; direct now: e."],
        [],
      ]);
    } finally {
      await rpc.close();
    }
  }, 120_000);
});
