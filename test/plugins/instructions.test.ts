/**
 * The instructions plugin in-process (fixture servers over the SDK's
 * in-memory transport pair): the Instruction Snapshot appended to the system
 * prompt is one attributed section per server with non-empty instructions,
 * in name order, after the servers' tool catalogs reached Pi. No tool
 * rosters: a change of tools alone leaves it as it was. A server whose tools
 * are not declared to the model (deferred) gets one line on how to reach
 * them. Without the plugin the system prompt is left alone.
 */
import type { McpServer } from "@modelcontextprotocol/server";
import { afterEach, describe, expect, it } from "vitest";
import { InstructionsPlugin } from "../../plugins/instructions/index.ts";
import { type FixtureServer, type PluginTestHost, pluginHost, stopAllHosts } from "./harness.ts";

afterEach(stopAllHosts);

const BASE = "You are Pi.";
const HEADER =
  "# Instructions from MCP servers\n\nThese come from the MCP servers named below; they describe their tools (mcp__<server>__<tool>).";

/** A 2025-era server with one tool (`add_tool` adds another), and `instructions` when given. */
function server(instructions?: string, settings: Record<string, unknown> = {}): FixtureServer {
  return {
    era: "legacy",
    settings,
    options: { capabilities: { tools: { listChanged: true } }, ...(instructions !== undefined && { instructions }) },
    build(mcp: McpServer) {
      mcp.registerTool("add_tool", {}, async () => {
        mcp.registerTool("added", {}, async () => ({ content: [] }));
        return { content: [{ type: "text", text: "added" }] };
      });
    },
  };
}

async function synced(h: PluginTestHost, servers: readonly string[]): Promise<void> {
  for (const name of servers) await h.waitForTools(1, { server: name });
  await h.host.flushTools();
}

describe("the Instruction Snapshot", () => {
  it("has one attributed section per server with instructions, in name order, and nothing for the others", async () => {
    const h = await pluginHost([new InstructionsPlugin()], {
      zeta: server("  Use zeta for Z things.  "),
      alpha: server("Alpha answers questions about A."),
      quiet: server(),
      blank: server("   \n "),
    });
    await synced(h, ["zeta", "alpha", "quiet", "blank"]);
    expect(h.host.systemPrompt(BASE)).toBe(
      `${BASE}\n\n${HEADER}\n\n## MCP server "alpha"\n\nAlpha answers questions about A.\n\n## MCP server "zeta"\n\nUse zeta for Z things.`,
    );
  });

  it("does not change when only a server's tools change", async () => {
    const h = await pluginHost([new InstructionsPlugin()], { docs: server("Docs about docs.") });
    await synced(h, ["docs"]);
    const before = h.host.systemPrompt(BASE);
    await h.call("mcp__docs__add_tool");
    await h.waitForTools(2, { server: "docs" });
    await h.host.flushTools();
    expect(h.host.systemPrompt(BASE)).toBe(before);
  });

  it("tells how to reach a server's tools that are not declared to the model", async () => {
    const h = await pluginHost([new InstructionsPlugin()], { lib: server(undefined, { exposure: "deferred" }) });
    await h.waitUntil(
      () => h.host.systemPrompt(BASE) !== BASE,
      10_000,
      () => h.host.systemPrompt(BASE),
    );
    expect(h.host.systemPrompt(BASE)).toBe(
      `${BASE}\n\n${HEADER}\n\n## MCP server "lib"\n\nSome tools of this server (mcp__lib__*) are not declared to you: find and load them with tool_search.`,
    );
  });

  it("is nothing without the plugin", async () => {
    const h = await pluginHost([], { docs: server("Docs about docs.") });
    await synced(h, ["docs"]);
    expect(h.host.systemPrompt(BASE)).toBe(BASE);
  });
});
