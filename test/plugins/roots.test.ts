/**
 * The roots plugin in-process (with the result mappers, to read tool results
 * as text; fixture servers over the SDK's in-memory transport pair): a server that asks `roots/list` gets Pi's working folder
 * as one `file://` root, or the folders of its `roots` setting (else the
 * top-level one), relative ones taken from the working folder; a folder that
 * does not exist is sent as configured and the server's log says so.
 * `roots: false` declares no roots capability. Settings applied in the
 * session that change what a live server would receive are announced with
 * `notifications/roots/list_changed`, without a reconnect.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { inputRequired, inputResponse } from "@modelcontextprotocol/server";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ResultMappingPlugin } from "../../plugins/result-mapping/index.ts";
import { RootsPlugin } from "../../plugins/roots/index.ts";
import { createRedactor } from "../../src/safety/text.ts";
import { buildConfig, textOf } from "../helpers/host.ts";
import { type FixtureServer, pluginHost, stopAllHosts } from "./harness.ts";

afterEach(stopAllHosts);

let project: string;
beforeAll(async () => {
  project = await mkdtemp(join(tmpdir(), "pi-mcp-roots-"));
});
afterAll(async () => {
  await rm(project, { recursive: true, force: true });
});

/** `roots` asks for the client's roots (an input request: both eras) and answers them as JSON. */
function asking(era: "legacy" | "modern", settings: Record<string, unknown> = {}): FixtureServer {
  return {
    era,
    settings,
    options: { capabilities: { tools: {} } },
    build(server) {
      server.registerTool("roots", {}, (ctx) => {
        const answer = inputResponse(ctx.mcpReq.inputResponses, "roots");
        if (answer.kind === "roots") return { content: [{ type: "text", text: JSON.stringify(answer.roots) }] };
        return inputRequired({ inputRequests: { roots: inputRequired.listRoots() } });
      });
    },
  };
}

const rootOf = (folder: string) => ({ uri: pathToFileURL(folder).href, name: folder.split("/").at(-1) });

describe.each(["legacy", "modern"] as const)("a %s-era server", (era) => {
  it("gets Pi's working folder as its one root", async () => {
    const h = await pluginHost([new RootsPlugin(), new ResultMappingPlugin()], { docs: asking(era) }, { cwd: project });
    await h.waitForTools(1, { server: "docs" });
    expect(JSON.parse(textOf(await h.call("mcp__docs__roots")))).toEqual([rootOf(project)]);
  });

  it("gets the folders its roots setting names instead, relative ones taken from the working folder", async () => {
    const h = await pluginHost(
      [new RootsPlugin(), new ResultMappingPlugin()],
      { docs: asking(era, { roots: ["/", "sub/dir"] }) },
      { cwd: project },
    );
    await h.waitForTools(1, { server: "docs" });
    expect(JSON.parse(textOf(await h.call("mcp__docs__roots")))).toEqual([
      { uri: "file:///", name: "/" },
      rootOf(join(project, "sub/dir")),
    ]);
    expect(h.host.server("docs")!.log.text()).toContain(`[pi-mcp] root ${join(project, "sub/dir")} (no such folder): sent as configured`);
  });
});

describe("a 2025-era server", () => {
  it("with roots: false is declared no roots capability and cannot list roots", async () => {
    const h = await pluginHost(
      [new RootsPlugin(), new ResultMappingPlugin()],
      { docs: asking("legacy", { roots: false }) },
      { cwd: project },
    );
    await h.waitForTools(1, { server: "docs" });
    expect(h.server("docs").initializeCapabilities()).not.toHaveProperty("roots");
    await expect(h.server("docs").instance().server.listRoots()).rejects.toThrow();
  });

  it("hears about roots changed by settings applied in the session, on the same connection", async () => {
    const h = await pluginHost([new RootsPlugin(), new ResultMappingPlugin()], { docs: asking("legacy") }, { cwd: project });
    await h.waitForTools(1, { server: "docs" });
    const changed = () =>
      h
        .server("docs")
        .methods()
        .filter((method) => method === "notifications/roots/list_changed").length;
    const apply = (roots?: string[]) => {
      const config = buildConfig({ docs: { command: "in-memory", ...(roots && { roots }) } });
      return h.host.applyConfig(config, createRedactor(config.secrets));
    };
    await apply(["/"]);
    await h.waitUntil(
      () => changed() === 1,
      10_000,
      () => h.server("docs").methods().join(", "),
    );
    expect(JSON.parse(textOf(await h.call("mcp__docs__roots")))).toEqual([{ uri: "file:///", name: "/" }]);
    await apply(["/"]); // the same roots: nothing to announce
    await h.call("mcp__docs__roots");
    expect(changed()).toBe(1);
    expect(h.server("docs").connections).toBe(1);
  });
});
