// The context budget's estimate and decision (src/runtime/context-budget.ts), on their own: the e2e tests try them in Pi.
import type { Tool } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { resolveConfig } from "../../src/config/resolve.ts";
import { checkedScope } from "../../src/config/schema.ts";
import {
  ContextBudget,
  budgetTokens,
  catalogTokens,
  contextText,
  definitionTokens,
  deferredServers,
  type BudgetCatalog,
} from "../../src/runtime/context-budget.ts";

const sources = { globalPath: "/g/settings.json", projectPath: "/p/.pi/settings.json", projectTrusted: true };
const load = (mcp: Record<string, unknown>) => resolveConfig(checkedScope("global", "/g/settings.json", mcp), undefined, {}, sources);

/** A tool whose definition is about `tokens` tokens by the estimate. */
function toolOf(name: string, tokens: number, server: string): Tool {
  const base = definitionTokens({ name, description: "", inputSchema: { type: "object" } }, server);
  return { name, description: "x".repeat(Math.max(0, (tokens - base) * 4)), inputSchema: { type: "object" } };
}

function catalogs(config: ReturnType<typeof load>, sizes: Record<string, number[]>): BudgetCatalog[] {
  return config.servers.map((entry) => ({
    entry,
    catalog: (sizes[entry.name] ?? []).map((tokens, index) => ({ tool: toolOf(`t${index}`, tokens, entry.name) })),
  }));
}

describe("the estimate", () => {
  it("is the UTF-8 bytes of the Pi name, description and input schema as JSON, divided by 4 and rounded up", () => {
    const tool: Tool = { name: "echo", description: "Échoes", inputSchema: { type: "object", properties: { m: { type: "string" } } } };
    const json = JSON.stringify({ name: "mcp__docs__echo", description: "Échoes", inputSchema: tool.inputSchema });
    expect(definitionTokens(tool, "docs")).toBe(Math.ceil(Buffer.byteLength(json, "utf8") / 4));
    // Fields the model is not sent do not count.
    expect(definitionTokens({ ...tool, title: "A long title", outputSchema: { type: "object" } } as Tool, "docs")).toBe(
      definitionTokens(tool, "docs"),
    );
    expect(catalogTokens([tool, tool], "docs")).toBe(2 * definitionTokens(tool, "docs"));
  });

  it("a share of the window or an absolute number", () => {
    expect(budgetTokens({ percent: 10 }, 200_000)).toBe(20_000);
    expect(budgetTokens({ tokens: 5_000 }, 200_000)).toBe(5_000);
  });
});

describe("the decision", () => {
  it("keeps everything direct within the budget and defers whole servers, the largest first, past it", () => {
    const servers = [
      { name: "a", auto: 500, direct: 0 },
      { name: "b", auto: 3_000, direct: 0 },
      { name: "c", auto: 1_000, direct: 0 },
    ];
    expect(deferredServers(servers, 10_000)).toEqual(new Set());
    expect(deferredServers(servers, 2_000)).toEqual(new Set(["b"]));
    expect(deferredServers(servers, 1_000)).toEqual(new Set(["b", "c"]));
    // Explicitly direct tools count against the budget.
    expect(deferredServers([...servers, { name: "d", auto: 0, direct: 1_800 }], 2_000)).toEqual(new Set(["a", "b", "c"]));
    // Ties go by name.
    expect(
      deferredServers(
        [
          { name: "y", auto: 100, direct: 0 },
          { name: "x", auto: 100, direct: 0 },
        ],
        150,
      ),
    ).toEqual(new Set(["x"]));
  });

  it("explicit settings win: a server or tool set explicitly keeps its exposure, only auto tools move", () => {
    const config = load({
      contextBudget: 1_000,
      servers: {
        big: { command: "node" },
        pinned: { command: "node", exposure: "direct" },
        partly: { command: "node", toolExposure: { t0: "hidden" } },
      },
    });
    const budget = new ContextBudget({ window: 100_000 });
    const plan = budget.plan(config, catalogs(config, { big: [2_000], pinned: [300], partly: [50, 100] }));
    const entry = (name: string) => config.servers.find((server) => server.name === name)!;
    expect(plan.exposure(entry("big"), "t0")).toBe("deferred");
    expect(plan.exposure(entry("pinned"), "t0")).toBe("direct");
    expect(plan.exposure(entry("partly"), "t0")).toBe("hidden");
    expect(plan.exposure(entry("partly"), "t1")).toBe("direct");
    expect(contextText({ ...plan.servers.get("big")!, budget: plan.budget, window: plan.window, windowKnown: plan.windowKnown })).toBe(
      "auto: deferred, 2,000 tokens, budget 1,000 of 100,000",
    );
    expect(contextText(plan.servers.get("pinned")!)).toBe("direct (set), 300 tokens");
  });

  it("the same inputs give the same decision whatever order the servers came in; a smaller window defers more", () => {
    const config = load({ servers: { a: { command: "node" }, b: { command: "node" }, c: { command: "node" } } });
    const sizes = { a: [4_000], b: [9_000], c: [6_000] };
    const offered = catalogs(config, sizes);
    const decide = (list: BudgetCatalog[], window: number) => {
      const plan = new ContextBudget({ window }).plan(config, list);
      return Object.fromEntries(list.map(({ entry }) => [entry.name, plan.exposure(entry, "t0")]));
    };
    expect(decide(offered, 200_000)).toEqual({ a: "direct", b: "direct", c: "direct" });
    expect(decide([...offered].reverse(), 100_000)).toEqual(decide(offered, 100_000));
    expect(decide(offered, 100_000)).toEqual({ a: "direct", b: "deferred", c: "direct" });
    expect(decide(offered, 50_000)).toEqual({ a: "direct", b: "deferred", c: "deferred" });
    expect(decide(offered, 30_000)).toEqual({ a: "deferred", b: "deferred", c: "deferred" });
  });

  it("holds its decisions during a run: a server that arrives is fitted into what is left; after the run all is decided anew, said once", () => {
    const config = load({ contextBudget: 10_000, servers: { a: { command: "node" }, b: { command: "node" } } });
    const notices: string[] = [];
    const budget = new ContextBudget({ window: 100_000, notice: (text) => notices.push(text) });
    const onlyA = catalogs(config, { a: [4_000] }).slice(0, 1);
    const both = catalogs(config, { a: [4_000], b: [8_000] });
    const entry = (name: string) => config.servers.find((server) => server.name === name)!;
    budget.plan(config, onlyA);
    budget.hold();
    let plan = budget.plan(config, both);
    expect([plan.exposure(entry("a"), "t0"), plan.exposure(entry("b"), "t0")]).toEqual(["direct", "deferred"]);
    // The run goes on with the same decisions however often the tools sync.
    plan = budget.plan(config, both);
    expect([plan.exposure(entry("a"), "t0"), plan.exposure(entry("b"), "t0")]).toEqual(["direct", "deferred"]);
    budget.release();
    plan = budget.plan(config, both);
    expect([plan.exposure(entry("a"), "t0"), plan.exposure(entry("b"), "t0")]).toEqual(["direct", "deferred"]);
    expect(notices).toEqual([]);
    // A smaller window: decided anew at once (between runs), said when the next run's first request goes out.
    budget.setWindow(20_000);
    const smaller = load({ servers: { a: { command: "node" }, b: { command: "node" } } });
    plan = budget.plan(smaller, both);
    expect([plan.exposure(entry("a"), "t0"), plan.exposure(entry("b"), "t0")]).toEqual(["deferred", "deferred"]);
    budget.hold();
    budget.hold();
    expect(notices).toEqual(["MCP context budget 2,000 of 20,000 tokens, decided anew: deferred now: a."]);
  });

  it("a server fitted in during a run counts as sent: when the next run decides it anew, the line says so", () => {
    const config = load({ contextBudget: 10_000, servers: { a: { command: "node" }, b: { command: "node" } } });
    const notices: string[] = [];
    const budget = new ContextBudget({ window: 100_000, notice: (text) => notices.push(text) });
    const entry = (name: string) => config.servers.find((server) => server.name === name)!;
    budget.plan(config, catalogs(config, { a: [7_000] }).slice(0, 1));
    budget.hold();
    // b arrives: 4,000 does not fit the 3,000 that a leaves, so it is deferred for the rest of the run.
    let plan = budget.plan(config, catalogs(config, { a: [7_000], b: [4_000] }));
    expect([plan.exposure(entry("a"), "t0"), plan.exposure(entry("b"), "t0")]).toEqual(["direct", "deferred"]);
    budget.release();
    // Decided anew, a (the largest) goes and b fits.
    plan = budget.plan(config, catalogs(config, { a: [7_000], b: [4_000] }));
    expect([plan.exposure(entry("a"), "t0"), plan.exposure(entry("b"), "t0")]).toEqual(["deferred", "direct"]);
    expect(budget.redecided).toBe(true);
    budget.hold();
    expect(notices).toEqual(["MCP context budget 10,000 of 100,000 tokens, decided anew: deferred now: a; direct now: b."]);
  });

  it("in a Pi without tool exposure, auto is direct, after one notice", () => {
    const config = load({ contextBudget: 100, servers: { a: { command: "node" } } });
    const notices: string[] = [];
    const budget = new ContextBudget({ exposureSupported: false, notice: (text) => notices.push(text) });
    const plan = budget.plan(config, catalogs(config, { a: [500] }));
    budget.plan(config, catalogs(config, { a: [500] }));
    expect(plan.exposure(config.servers[0]!, "t0")).toBe("direct");
    expect(notices).toHaveLength(1);
    expect(notices[0]).toContain("does not support tool exposure");
  });
});
