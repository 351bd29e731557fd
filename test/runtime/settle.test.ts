// The host's own events: `settled` (what `/mcp wait` answers on) and
// `flushTools` wait for what they promise, however slow the machine.
import { afterEach, expect, it } from "vitest";
import { fixtureServer, startHost, stopAllHosts, textOf } from "../helpers/host.ts";
import { nodePath } from "../helpers/servers.ts";

afterEach(stopAllHosts);

it("settled resolves true once every server has connected or failed, with the connected ones' tools in Pi", async () => {
  const h = await startHost(
    { basic: fixtureServer("basic"), dies: { command: nodePath(), args: ["-e", "process.exit(3)"] } },
    { retry: { maxRetries: 1, initialDelayMs: 50 } },
  );
  const started = Date.now();
  expect(await h.host.settled(60_000)).toBe(true);
  // Woken by the last state change, not by its timeout.
  expect(Date.now() - started).toBeLessThan(30_000);
  expect(h.status("basic").state).toBe("connected");
  expect([...h.sink.active].sort()).toEqual(["mcp__basic__add", "mcp__basic__echo", "mcp__basic__env"]);
  expect(h.status("dies")).toMatchObject({ state: "failed", attempts: 2 });
}, 90_000);

it("settled resolves false at its timeout while a server is still connecting", async () => {
  const h = await startHost({ silent: fixtureServer("hang", { FIXTURE_HANG: "initialize" }, { connectTimeoutMs: 60_000 }) });
  const started = Date.now();
  expect(await h.host.settled(300)).toBe(false);
  expect(Date.now() - started).toBeGreaterThanOrEqual(300);
  expect(Date.now() - started).toBeLessThan(10_000);
  expect(h.status("silent").state).toBe("connecting");
});

it("flushTools returns once an announced catalog change has reached Pi", async () => {
  const h = await startHost({ lc: fixtureServer("list-changed") });
  await h.waitForTools(3, { server: "lc" });
  // The server announces the change before it answers; the re-list is folded, then runs.
  expect(textOf(await h.call("mcp__lc__churn", { count: 1 }))).toBe("churned 1");
  await h.host.flushTools();
  expect([...h.sink.active].sort()).toEqual(["mcp__lc__churn", "mcp__lc__gen_1", "mcp__lc__progress"]);
});
