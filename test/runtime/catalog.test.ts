// Tool catalogs through OUR host: paging (huge, repeated and endless), hostile
// names, list_changed storms, and per-server include/exclude filters.
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createKernel } from "../../src/composition.ts";
import { childServers, fixtureServer, startHost, stopAllHosts, textOf, type TestHost } from "../helpers/host.ts";

afterEach(stopAllHosts);

describe("paging", () => {
  it("registers all 10,000 tools served over 100 pages", async () => {
    const h = await startHost({ many: fixtureServer("many-tools") });
    await h.waitForState("many", "connected", 20_000);
    const names = await h.waitForTools(10_000, { server: "many", timeoutMs: 30_000 });
    const registered = new Set(h.sink.registerCalls.flat().map((tool) => tool.name));
    expect(registered.size).toBe(10_000);
    expect(names).toHaveLength(10_000);
    for (const i of [0, 1, 99, 100, 5_000, 9_999]) expect(registered).toContain(`mcp__many__t${i}`);
    expect(textOf(await h.call("mcp__many__t9999"))).toBe("t9999");
  }, 30_000);

  it("fails a server that repeats a pagination cursor instead of looping, retrying only as the policy allows", async () => {
    const h = await startHost(
      { repeat: fixtureServer("many-tools", { FIXTURE_CURSOR: "repeat" }) },
      { retry: { maxRetries: 1, initialDelayMs: 50 } },
    );
    const status = await h.waitForState("repeat", "failed", 30_000);
    expect(status.cause).toMatch(/repeated a pagination cursor/);
    expect(status.attempts).toBe(2);
    // It stays failed: no hidden retry keeps running.
    expect(h.states("repeat")).toEqual(["connecting", "retrying", "connecting", "failed"]);
    expect(h.status("repeat").nextRetryAt).toBeUndefined();
    expect(h.sink.active.size).toBe(0);
    await h.stop();
    expect(childServers()).toEqual([]);
  }, 20_000);

  it("stops an endless cursor chain at 1,000 pages with an error", async () => {
    const h = await startHost(
      { endless: fixtureServer("many-tools", { FIXTURE_TOOLS: "10", FIXTURE_PAGE_SIZE: "10", FIXTURE_CURSOR: "endless" }) },
      { retry: { maxRetries: 0 } },
    );
    const status = await h.waitForState("endless", "failed", 25_000);
    expect(status.cause).toMatch(/more than 1000 pages/);
    expect(status.attempts).toBe(1);
    expect(h.sink.active.size).toBe(0);
  }, 30_000);
});

describe("tool names", () => {
  const NAME = /^[a-zA-Z0-9_-]{1,64}$/;
  const COLLIDING = ["a.b", "a/b", "a b", "a_b"];
  const prefix = `long_${"x".repeat(59)}`;

  async function nameMap(): Promise<Map<string, string>> {
    const h = await startHost({ names: fixtureServer("names") });
    await h.waitForTools(7, { server: "names" });
    const map = new Map([...h.sink.tools.values()].map((tool) => [tool.tool.name, tool.name]));
    await h.stop();
    return map;
  }

  it("makes every name valid and unique, suffixing colliding ones deterministically, and the escape-laden tool works", async () => {
    const first = await nameMap();
    const second = await nameMap();
    expect(first.size).toBe(7);
    const piNames = [...first.values()];
    for (const name of piNames) expect(name).toMatch(NAME);
    expect(new Set(piNames).size).toBe(piNames.length);
    // The four names that sanitize to mcp__names__a_b all get a hash suffix.
    for (const tool of COLLIDING) expect(first.get(tool)).toMatch(/^mcp__names__a_b_[0-9a-f]{8,}$/);
    const alpha = first.get(`${prefix}_alpha`)!;
    const beta = first.get(`${prefix}_beta`)!;
    expect(alpha).not.toBe(beta);
    expect(alpha.length).toBeLessThanOrEqual(64);
    // Same server, same tools: same names on the next run.
    expect([...second.entries()].sort()).toEqual([...first.entries()].sort());

    const h = await startHost({ names: fixtureServer("names") });
    await h.waitForTools(7, { server: "names" });
    const escaping = [...h.sink.tools.values()].find((tool) => tool.tool.name.startsWith("esc"))!;
    expect(escaping.name).toMatch(NAME);
    const out = await h.call(escaping.name);
    expect(out.isError).toBe(false);
    expect(textOf(out)).toContain("RED");
    expect(textOf(out)).toMatch(/end$/);
    expect(textOf(await h.call(first.get("a/b")!))).toBe('called "a/b"');
    expect(textOf(await h.call(first.get("a b")!))).toBe('called "a b"');
  });
});

describe("tool names across servers", () => {
  // `w.x` and `w_x` sanitize to the same prefix: every tool of one could collide with the other's.
  const WITNESS_TOOLS = 4;

  /** Pi name per (server, tool) when `first` connects and its tools reach Pi before `second` may start. */
  async function namesWhen(first: string, second: string): Promise<Map<string, string>> {
    const gates = await mkdtemp(join(tmpdir(), "pi-mcp-gates-"));
    const gated = (server: string) => fixtureServer("witness", { FIXTURE_START_GATE: join(gates, server) });
    const h = await startHost({ "w.x": gated("w.x"), w_x: gated("w_x") });
    const offeredBy = (server: string) =>
      [...h.sink.tools.values()].filter((tool) => tool.server === server && h.sink.active.has(tool.name));
    const connect = async (server: string) => {
      await writeFile(join(gates, server), "");
      await h.waitUntil(
        () => offeredBy(server).length === WITNESS_TOOLS,
        30_000,
        () => `${server}: ${offeredBy(server).length} tools`,
      );
    };
    await connect(first);
    await connect(second);
    const names = new Map([...h.sink.tools.values()].map((tool) => [`${tool.server}/${tool.tool.name}`, tool.name]));
    await h.stop();
    return names;
  }

  it("gives each (server, tool) the same Pi name whichever server connects first, suffixing both sides of a collision", async () => {
    const xFirst = await namesWhen("w.x", "w_x");
    const underscoreFirst = await namesWhen("w_x", "w.x");
    expect(xFirst.size).toBe(2 * WITNESS_TOOLS);
    expect([...underscoreFirst.entries()].sort()).toEqual([...xFirst.entries()].sort());
    expect(new Set(xFirst.values()).size).toBe(xFirst.size);
    for (const [id, name] of xFirst) expect(name, id).toMatch(/^mcp__w_x__[a-z]+_[0-9a-f]{8}$/);
  });

  it("a server whose names nobody else could produce keeps them unsuffixed", async () => {
    const h = await startHost({ w: fixtureServer("witness"), "w.x": fixtureServer("witness") });
    await h.waitForTools(WITNESS_TOOLS, { server: "w" });
    expect([...h.sink.active].filter((name) => name.startsWith("mcp__w__")).sort()).toEqual([
      "mcp__w__audio",
      "mcp__w__count",
      "mcp__w__hold",
      "mcp__w__restart",
    ]);
  });
});

describe("without the tool-names plugin", () => {
  it("offers each tool under its raw name, and leaves out (and logs) one whose raw name providers reject", async () => {
    const h: TestHost = await startHost({ names: fixtureServer("names") }, { kernel: createKernel({ disable: ["tool-names"] }) });
    await h.waitForState("names", "connected");
    await h.host.flushTools();
    expect([...h.sink.active]).toEqual(["mcp__names__a_b"]);
    expect(textOf(await h.call("mcp__names__a_b"))).toBe('called "a_b"');
    const log = h.host.server("names")!.log.text();
    for (const tool of ["a.b", "a/b", "a b"])
      expect(log).toContain(
        `left out tool ${JSON.stringify(tool)}: its Pi name ${JSON.stringify(`mcp__names__${tool}`)} cannot be used (model providers accept no such tool name)`,
      );
  });
});

describe("list_changed", () => {
  it("coalesces 2,000 list_changed notifications into a bounded number of catalog updates with the right final catalog", async () => {
    const h = await startHost({ lc: fixtureServer("list-changed") });
    await h.waitForTools(3, { server: "lc" });
    expect(h.sink.active).toContain("mcp__lc__gen_0");
    const callsBefore = h.sink.registerCalls.length + h.sink.deactivateCalls.length;

    expect(textOf(await h.call("mcp__lc__churn", { count: 2000 }))).toBe("churned 2000");
    await h.waitUntil(() => h.sink.active.has("mcp__lc__gen_2000"));
    await h.host.flushTools(); // any re-list still folded or under way lands now
    expect(h.sink.active.has("mcp__lc__gen_2000")).toBe(true);
    expect(h.sink.active.has("mcp__lc__gen_0")).toBe(false);
    expect(h.sink.deactivateCalls.flat()).toContain("mcp__lc__gen_0");
    expect([...h.sink.active].sort()).toEqual(["mcp__lc__churn", "mcp__lc__gen_2000", "mcp__lc__progress"]);
    const updates = h.sink.registerCalls.length + h.sink.deactivateCalls.length - callsBefore;
    expect(updates).toBeGreaterThan(0);
    expect(updates).toBeLessThan(50);
    expect(textOf(await h.call("mcp__lc__gen_2000"))).toBe("gen_2000");
  }, 30_000);
});

describe("list_changed after /mcp reconnect", () => {
  it("re-lists again: closing the connection dropped what was folded, not the re-lists of the next one", async () => {
    const h = await startHost({ lc: fixtureServer("list-changed") });
    await h.waitForTools(3, { server: "lc" });
    await h.host.reconnect("lc");
    await h.waitForState("lc", "connected");
    expect(textOf(await h.call("mcp__lc__churn", { count: 1 }))).toBe("churned 1");
    await h.waitUntil(() => h.sink.active.has("mcp__lc__gen_1"));
    expect(h.sink.active.has("mcp__lc__gen_0")).toBe(false);
  });
});

describe("tool filters", () => {
  it("applies per-server tools.include and tools.exclude", async () => {
    const h = await startHost({
      included: fixtureServer("basic", {}, { tools: { include: ["e*"], exclude: ["env"] } }),
      excluded: fixtureServer("basic", {}, { tools: { exclude: ["add", "env"] } }),
      onlyAdd: fixtureServer("basic", {}, { tools: { include: ["add"] } }),
      all: fixtureServer("basic"),
    });
    for (const [server, count] of [
      ["included", 1],
      ["excluded", 1],
      ["onlyAdd", 1],
      ["all", 3],
    ] as const)
      await h.waitForTools(count, { server });
    await h.host.flushTools();
    const of = (server: string) => [...h.sink.active].filter((name) => name.startsWith(`mcp__${server}__`)).sort();
    expect(of("included")).toEqual(["mcp__included__echo"]);
    expect(of("excluded")).toEqual(["mcp__excluded__echo"]);
    expect(of("onlyAdd")).toEqual(["mcp__onlyAdd__add"]);
    expect(of("all")).toEqual(["mcp__all__add", "mcp__all__echo", "mcp__all__env"]);
    expect(h.status("included").tools).toBe(1);
    expect(textOf(await h.call("mcp__onlyAdd__add", { a: 1, b: 2 }))).toBe("3");
  });
});
