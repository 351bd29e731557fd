/**
 * The tool-names plugin in-process (fixture servers over the SDK's in-memory
 * transport pair): every server tool becomes the Pi tool
 * `mcp__<server>__<tool>`, characters model providers reject replaced by `_`
 * and cut to 64, with a deterministic hash suffix only where names could
 * collide (two tools of one server, or two servers whose names make the same
 * prefix), on both sides, whichever server connected first. A call of the Pi
 * tool reaches the server's tool under its own name. Without the plugin a
 * tool is offered under its raw name, and left out (its log says why) when
 * providers would reject that name.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ToolNamesPlugin } from "../../plugins/tool-names/index.ts";
import { MAX_TOOL_NAME, withHashSuffix } from "../../plugins/tool-names/names.ts";
import { type FixtureServer, pluginHost, stopAllHosts } from "./harness.ts";

afterEach(stopAllHosts);

/** A 2025-era server offering `names`, each answering its own name. */
function offering(...names: string[]): FixtureServer {
  return {
    era: "legacy",
    options: { capabilities: { tools: {} } },
    build(server) {
      server.server.setRequestHandler("tools/list", () => ({ tools: names.map((name) => ({ name, inputSchema: { type: "object" } })) }));
      server.server.setRequestHandler("tools/call", (request) => ({ content: [{ type: "text", text: request.params.name }] }));
    },
  };
}

const PROVIDER_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

describe("Pi tool names", () => {
  it("are mcp__<server>__<tool>, made safe for providers and cut to 64, and reach the tool under its own name", async () => {
    const long = "x".repeat(80);
    const h = await pluginHost([new ToolNamesPlugin()], { docs: offering("echo", "read file.v2", long) });
    const names = await h.waitForTools(3, { server: "docs" });
    expect(names.sort()).toEqual(["mcp__docs__echo", "mcp__docs__read_file_v2", `mcp__docs__${long}`.slice(0, MAX_TOOL_NAME)].sort());
    for (const name of names) expect(name).toMatch(PROVIDER_NAME);
    await h.call("mcp__docs__read_file_v2");
    expect(h.server("docs").params("tools/call")).toMatchObject([{ name: "read file.v2", arguments: {} }]);
  });

  it("get a hash suffix on both sides where two tools of a server would get the same name", async () => {
    const h = await pluginHost([new ToolNamesPlugin()], { docs: offering("a.b", "a_b", "c") });
    const names = new Set(await h.waitForTools(3, { server: "docs" }));
    expect(names).toEqual(
      new Set([withHashSuffix("mcp__docs__a_b", "docs", "a.b"), withHashSuffix("mcp__docs__a_b", "docs", "a_b"), "mcp__docs__c"]),
    );
    await h.call(withHashSuffix("mcp__docs__a_b", "docs", "a.b"));
    expect(
      h
        .server("docs")
        .params("tools/call")
        .map((params) => params.name),
    ).toEqual(["a.b"]);
  });

  it("get a hash suffix where two servers' names make the same prefix, whichever connected first", async () => {
    const h = await pluginHost([new ToolNamesPlugin()], { "a.b": offering("x"), a_b: offering("x") });
    await h.waitForTools(2);
    expect([...h.sink.active].sort()).toEqual(
      [withHashSuffix("mcp__a_b__x", "a.b", "x"), withHashSuffix("mcp__a_b__x", "a_b", "x")].sort(),
    );
  });
});

describe("without the plugin", () => {
  it("a tool is offered under its raw name, and one providers would reject is left out, its log saying why", async () => {
    const h = await pluginHost([], { docs: offering("echo", "read file") });
    await h.waitForTools(1, { server: "docs" });
    await h.host.flushTools();
    expect([...h.sink.active]).toEqual(["mcp__docs__echo"]);
    expect(h.host.server("docs")!.log.text()).toContain(
      '[pi-mcp] left out tool "read file": its Pi name "mcp__docs__read file" cannot be used (model providers accept no such tool name)',
    );
  });
});
