// Connections that outlive a session: retained for the next one, leased exclusively, closed in time.
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it, vi } from "vitest";
import { ConnectionPool, processPool } from "../../src/runtime/pool.ts";
import { fixtureServer, isAlive, startHost, stopAllHosts, textOf, until } from "../helpers/host.ts";

afterEach(stopAllHosts);

async function startLog(): Promise<{ path: string; pids(): Promise<number[]> }> {
  const path = join(await mkdtemp(join(tmpdir(), "pi-mcp-pool-")), "starts.log");
  return { path, pids: async () => (await readFile(path, "utf8").catch(() => "")).split("\n").filter(Boolean).map(Number) };
}

it("hands a live connection to the next session: same process, no second initialize, tools at once", async () => {
  const pool = new ConnectionPool();
  const log = await startLog();
  const servers = { one: fixtureServer("crash", { FIXTURE_START_LOG: log.path }) };
  const first = await startHost(servers, { pool });
  await first.waitForTools(2, { server: "one" });
  const pid = first.status("one").pid!;
  await first.host.shutdown(undefined, "replaced");
  expect(pool.size).toBe(1);
  expect(isAlive(pid)).toBe(true);

  // Its tools are there at once: taking the connection over waits for no process and no round trip.
  const second = await startHost(servers, { pool });
  expect([...second.sink.active].sort()).toEqual(["mcp__one__crash", "mcp__one__ok"]);
  expect(second.status("one")).toMatchObject({ state: "connected", pid });
  expect(second.status("one").reusedAt).toBeTypeOf("number");
  expect(await log.pids()).toEqual([pid]);
  expect(pool.size).toBe(0);
  expect(textOf(await second.call("mcp__one__ok"))).toBe("ok");
  // The released session's tool definitions are dormant.
  await expect(first.call("mcp__one__ok")).rejects.toThrow(/this Pi session has ended/);
  // After a reconnect the connection is the session's own: no longer reported as reused.
  await second.host.reconnect("one");
  await second.waitForState("one", "connected");
  expect(second.status("one").reusedAt).toBeUndefined();
});

it("never lends one connection to two sessions, and does not reuse across different definitions", async () => {
  const pool = new ConnectionPool();
  const log = await startLog();
  const first = await startHost({ one: fixtureServer("crash", { FIXTURE_START_LOG: log.path }) }, { pool });
  await first.waitForTools(2);
  await first.host.shutdown(undefined, "replaced");
  const second = await startHost({ one: fixtureServer("crash", { FIXTURE_START_LOG: log.path }) }, { pool });
  const third = await startHost({ one: fixtureServer("crash", { FIXTURE_START_LOG: log.path }) }, { pool });
  await second.waitForState("one", "connected");
  await third.waitForState("one", "connected");
  expect(second.status("one").pid).not.toBe(third.status("one").pid);
  const other = await startHost({ one: fixtureServer("crash", { FIXTURE_START_LOG: log.path, DIFFERENT: "1" }) }, { pool });
  await other.waitForState("one", "connected");
  expect((await log.pids()).length).toBe(3);
});

it("closes a retained connection nobody takes once the retention time is over", async () => {
  const pool = new ConnectionPool(300);
  const h = await startHost({ one: fixtureServer("crash") }, { pool });
  await h.waitForState("one", "connected");
  const pid = h.status("one").pid!;
  await h.host.shutdown(undefined, "replaced");
  expect(isAlive(pid)).toBe(true);
  await until(() => !isAlive(pid), 15_000);
  expect(pool.size).toBe(0);
});

it("the pool Pi uses keeps a released connection for 30 s: still there a moment before, closed at 30 s", async () => {
  const pool = processPool(); // the one pool of this process, as the Pi entry takes it
  const h = await startHost({ one: fixtureServer("crash") }, { pool });
  await h.waitForState("one", "connected");
  const pid = h.status("one").pid!;
  // The pool's clock only: the connection and its process stay real.
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
  try {
    await h.host.shutdown(undefined, "replaced");
    expect(pool.size).toBe(1);
    vi.advanceTimersByTime(29_999);
    expect(pool.size).toBe(1);
    expect(isAlive(pid)).toBe(true);
    vi.advanceTimersByTime(1);
    expect(pool.size).toBe(0);
  } finally {
    vi.useRealTimers();
  }
  await until(() => !isAlive(pid), 15_000);
});

it("a notification after release reaches no handler of the released session", async () => {
  const pool = new ConnectionPool();
  const first = await startHost({ churn: fixtureServer("list-changed") }, { pool });
  await first.waitForTools(3, { server: "churn" });
  const connection = first.host.server("churn")!;
  const registeredBefore = first.sink.registerCalls.length;
  await first.host.shutdown(undefined, "replaced");
  // Make the server announce a changed catalog while nobody owns the connection.
  await connection.requireClient().callTool({ name: "churn", arguments: { count: 3 } });
  // The server announced the change before it answered: the re-list it starts (if any) is over now.
  await connection.catalogSettled();
  expect(first.sink.registerCalls.length).toBe(registeredBefore);
  // The next session takes it over and sees the new catalog without a second initialize.
  const second = await startHost({ churn: fixtureServer("list-changed") }, { pool });
  await second.waitForTools(3, { server: "churn" });
  expect([...second.sink.active].some((name) => /gen_[1-9]/.test(name))).toBe(true);
});

it("an MCP log message while the connection waits in the pool reaches no log, and the next session's log gets what follows", async () => {
  const pool = new ConnectionPool();
  const first = await startHost({ talk: fixtureServer("logger") }, { pool });
  await first.waitForState("talk", "connected");
  const connection = first.host.server("talk")!;
  const firstLog = connection.log;
  await first.host.shutdown(undefined, "replaced");
  // The server sends its message before it answers: the released session's handler has seen it by now.
  await connection.requireClient().callTool({ name: "say", arguments: { text: "while-pooled", to: "log" } });
  expect(firstLog.text()).not.toContain("while-pooled");
  const second = await startHost({ talk: fixtureServer("logger") }, { pool });
  await second.waitForState("talk", "connected");
  expect(second.host.server("talk")).toBe(connection);
  await connection.requireClient().callTool({ name: "say", arguments: { text: "adopted", to: "log" } });
  expect(connection.log.text()).toContain("[info] logger: adopted");
  expect(connection.log.text()).not.toContain("while-pooled");
  expect(firstLog.text()).not.toContain("adopted");
});

it("quitting closes retained connections too", async () => {
  const pool = new ConnectionPool();
  const a = await startHost({ one: fixtureServer("crash") }, { pool });
  await a.waitForState("one", "connected");
  const pid = a.status("one").pid!;
  await a.host.shutdown(undefined, "replaced");
  const b = await startHost({}, { pool });
  await b.host.shutdown(undefined, "quit");
  await until(() => !isAlive(pid), 15_000);
});
