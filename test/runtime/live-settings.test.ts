// Settings that change while a host runs: what connects, what closes, what stays.
import { afterEach, expect, it } from "vitest";
import { createRedactor } from "../../src/safety/text.ts";
import { buildConfig, fixtureServer, startHost, stopAllHosts, until } from "../helpers/host.ts";

afterEach(stopAllHosts);

it("connects an added server and closes a removed one without touching the others", async () => {
  const h = await startHost({ keep: fixtureServer("basic"), drop: fixtureServer("basic") });
  await h.waitForState("keep", "connected");
  await h.waitForState("drop", "connected");
  const keepPid = h.status("keep").pid;
  const next = buildConfig({ keep: fixtureServer("basic"), added: fixtureServer("basic") });
  await h.host.applyConfig(next, createRedactor(next.secrets));
  await h.waitForState("added", "connected");
  expect(h.host.server("drop")).toBeUndefined();
  expect(h.status("keep").pid).toBe(keepPid);
  await h.waitUntil(() => !h.sink.active.has("mcp__drop__echo") && h.sink.active.has("mcp__added__echo"));
  expect(h.sink.active.has("mcp__keep__echo")).toBe(true);
});

it("disconnects a server that was disabled and deactivates its tools", async () => {
  const h = await startHost({ one: fixtureServer("basic") });
  await h.waitForTools(3, { server: "one" });
  const next = buildConfig({ one: fixtureServer("basic", {}, { enabled: false }) });
  await h.host.applyConfig(next, createRedactor(next.secrets));
  await h.waitUntil(() => h.sink.active.size === 0);
  expect(h.host.server("one")?.state).toBe("disabled");
});

it("kills a server that ignores shutdown once the budget is spent", async () => {
  const h = await startHost({ stubborn: fixtureServer("basic") });
  await h.waitForState("stubborn", "connected");
  const pid = h.status("stubborn").pid!;
  const started = Date.now();
  await h.host.shutdown(1);
  await until(() => {
    try {
      process.kill(pid, 0);
      return false;
    } catch {
      return true;
    }
  }, 5_000);
  expect(Date.now() - started).toBeLessThan(5_000);
});
