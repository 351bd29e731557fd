// MCP Apps tool visibility through OUR host: a tool whose `_meta.ui.visibility`
// does not include "model" is not offered to the model. Against the real
// @modelcontextprotocol/server-system-monitor (an MCP Apps example whose
// `poll-system-stats` is app-only) and the app-tools fixture.
import { afterEach, expect, it } from "vitest";
import { fixtureServer, packageServer, startHost, stopAllHosts, textOf } from "../helpers/host.ts";

afterEach(stopAllHosts);

it("the MCP Apps example server-system-monitor offers the model get-system-info, never its app-only poll-system-stats", async () => {
  const h = await startHost({ monitor: packageServer("@modelcontextprotocol/server-system-monitor", ["--stdio"]) });
  await h.waitForState("monitor", "connected");
  await h.host.flushTools();
  expect([...h.sink.active].sort()).toEqual(["mcp__monitor__get-system-info"]);
  expect(h.status("monitor").tools).toBe(1);
  expect(await h.host.server("monitor")!.catalogCounts()).toMatchObject({ tools: 1 });
  expect(h.host.server("monitor")!.log.text()).toContain('left out tool "poll-system-stats": its _meta.ui.visibility is for the app only');
});

it("offers every tool whose visibility includes the model, in any shape a server writes it, and none whose marking leaves the model out or cannot be read", async () => {
  const h = await startHost({ app: fixtureServer("app-tools") });
  await h.waitForTools(7, { server: "app" });
  await h.host.flushTools();
  expect([...h.sink.active].sort()).toEqual([
    "mcp__app__for-both",
    "mcp__app__for-model",
    "mcp__app__map-model",
    "mcp__app__null-marking",
    "mcp__app__string-model",
    "mcp__app__ui-only",
    "mcp__app__unmarked",
  ]);
  expect(textOf(await h.call("mcp__app__for-both"))).toBe("for-both");
  const log = h.host.server("app")!.log.text();
  for (const name of ["for-app", "for-nobody", "odd-marking", "map-app"])
    expect(log).toContain(`left out tool "${name}": its _meta.ui.visibility is for the app only`);
  expect(log).toContain('left out tool "number-marking": its _meta.ui.visibility names no audience pi-mcp can read');
});
