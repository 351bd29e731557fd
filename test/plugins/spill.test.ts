/**
 * The spill plugin in-process (with the result mappers; fixture servers over
 * the SDK's in-memory transport pair): output over Pi's limit (2,000 lines /
 * 50 KB) is cut for the model, and the complete text is kept in a private
 * Result Spill file (0600, in the host's folder) whose path the cut output
 * and the details give. Without the plugin the output is cut all the same
 * and says so, with nothing kept.
 */
import { readFile, stat } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { ResultMappingPlugin } from "../../plugins/result-mapping/index.ts";
import { SpillPlugin } from "../../plugins/spill/index.ts";
import { PI_MAX_LINES, textOf } from "../helpers/host.ts";
import { type FixtureServer, pluginHost, stopAllHosts } from "./harness.ts";

afterEach(stopAllHosts);

const LINES = Array.from({ length: 3_000 }, (_, index) => `line ${index + 1}`).join("\n");

const verbose: FixtureServer = {
  era: "legacy",
  options: { capabilities: { tools: {} } },
  build(server) {
    server.registerTool("dump", {}, async () => ({ content: [{ type: "text", text: LINES }] }));
  },
};

describe("output over Pi's limit", () => {
  it("is cut for the model, the complete text kept in a private Result Spill file it is told of", async () => {
    const h = await pluginHost([new ResultMappingPlugin(), new SpillPlugin()], { docs: verbose });
    await h.waitForTools(1, { server: "docs" });
    const outcome = await h.call("mcp__docs__dump");
    const path = outcome.details.spillPath as string;
    expect(path.startsWith(`${h.privateDir}/spill/`)).toBe(true);
    const text = textOf(outcome);
    expect(text.split("\n").slice(0, PI_MAX_LINES)).toEqual(LINES.split("\n").slice(0, PI_MAX_LINES));
    expect(text).toContain(`[output truncated to Pi's limit; the complete ${LINES.length}-character output is in ${path}]`);
    expect(await readFile(path, "utf8")).toBe(LINES);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it("is cut all the same without the plugin, and says that nothing was kept", async () => {
    const h = await pluginHost([new ResultMappingPlugin()], { docs: verbose });
    await h.waitForTools(1, { server: "docs" });
    const outcome = await h.call("mcp__docs__dump");
    expect(textOf(outcome).endsWith("\n\n[output truncated to Pi's limit]")).toBe(true);
    expect(outcome.details).not.toHaveProperty("spillPath");
  });
});
