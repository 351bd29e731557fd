// The Pi entry reads the persisted catalogs and registers their tools in Pi's extension factory without
// loading the heavy parts: measured in a fresh Node process whose module resolution is watched, the
// entry reaches no arktype, no MCP SDK and no plugin, and registers every recorded tool.
import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { Tool } from "@modelcontextprotocol/client";
import { settingsDigest } from "../../src/config/settings-stamp.ts";
import { CatalogStore } from "../../src/runtime/catalog-store.ts";
import { nodeBinary, REPO_ROOT } from "../helpers/tmp.ts";

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "pi-mcp-entry-"));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/**
 * Imports the entry and runs its factory with a stand-in for Pi's API,
 * recording every module URL resolved on the way (which module asked), and
 * prints the edges, the registered tool names and the factory's time.
 */
const PROBE = `
import { registerHooks } from "node:module";
const edges = [];
registerHooks({ resolve(specifier, context, next) { const resolved = next(specifier, context); edges.push([context.parentURL ?? "", resolved.url]); return resolved; } });
const tools = [];
const pi = { registerTool: (tool) => tools.push(tool.name), registerCommand() {}, on() {}, getAllTools: () => [], getActiveTools: () => [], setActiveTools() {}, registerToolRendererResolver() {} };
const { default: piMcp } = await import(process.env.ENTRY);
const started = performance.now();
await piMcp(pi);
process.stdout.write(JSON.stringify({ edges, tools, factoryMs: performance.now() - started }));
`;

// From the build (dist/pi/entry.mjs, what Pi runs when the package has it) and from the sources (PI_MCP_CORE=source):
// the build's lazily loaded parts (dist/pi/chunks/: the core, the settings check, OAuth) stay unloaded too.
it.each([
  ["the build", {}],
  ["the sources", { PI_MCP_CORE: "source" }],
] as const)(
  "from %s: reading the catalog cache and registering its tools in the factory loads no arktype, no MCP SDK and no plugin",
  async (_, mode) => {
    const agentDir = join(root, "agent");
    const cwd = join(root, "project");
    const env = {
      PATH: process.env.PATH ?? "",
      HOME: root,
      PI_CODING_AGENT_DIR: agentDir,
      ENTRY: pathToFileURL(join(REPO_ROOT, "index.ts")).href,
      ...mode,
    };
    await Promise.all([mkdir(agentDir, { recursive: true }), mkdir(cwd, { recursive: true })]);
    await writeFile(
      join(agentDir, "settings.json"),
      JSON.stringify({ mcp: { servers: { srv: { command: "node", args: ["server.js"] } } } }),
    );
    // What an earlier session with these settings recorded (no project settings: trusted or not, both fit).
    const catalog = Array.from({ length: 500 }, (_, i): Tool => ({ name: `tool${i}`, inputSchema: { type: "object" } })).map((tool) => ({
      tool,
      json: JSON.stringify(tool),
    }));
    await new CatalogStore(agentDir).save({
      digest: settingsDigest({ agentDir, cwd, trusted: true, env }),
      servers: [
        {
          name: "srv",
          identity: "id",
          catalog,
          tools: catalog.map((entry) => ({ piName: `mcp__srv__${entry.tool.name}`, exposure: "direct" as const, ...entry })),
          counts: { tools: catalog.length },
        },
      ],
      complete: true,
    });

    const run = spawnSync(nodeBinary(), ["--no-warnings", "--input-type=module", "-e", PROBE], {
      cwd,
      env,
      encoding: "utf8",
      timeout: 60_000,
      // Every edge of the module graph, Pi's own included: about 0.8 MiB from a checkout at /work/main, more from a
      // longer path (spawnSync's default 1 MiB cap killed the probe, status null, in a clone under /tmp/…/clone).
      maxBuffer: 64 * 1024 * 1024,
    });
    expect({ status: run.status, signal: run.signal, error: run.error?.message }, run.stderr).toEqual({
      status: 0,
      signal: null,
      error: undefined,
    });
    const { edges, tools, factoryMs } = JSON.parse(run.stdout) as { edges: [string, string][]; tools: string[]; factoryMs: number };
    expect(tools).toHaveLength(500);
    expect(tools[0]).toBe("mcp__srv__tool0");

    // What pi-mcp's entry reaches, not following Pi's own package (Pi has loaded it already when it loads extensions).
    const reached = new Set<string>();
    const pending = [pathToFileURL(join(REPO_ROOT, "index.ts")).href];
    while (pending.length > 0) {
      const url = pending.pop()!;
      if (reached.has(url)) continue;
      reached.add(url);
      if (url.includes("/node_modules/@earendil-works/")) continue;
      for (const [parent, child] of edges) if (parent === url) pending.push(child);
    }
    const heavy = [...reached].filter((url) =>
      /\/node_modules\/(arktype|@ark|@modelcontextprotocol|ajv|tapable)\/|\/plugins\/|\/src\/composition\.ts|\/src\/pi\/extension\.ts|\/dist\/pi\/chunks\//.test(
        url,
      ),
    );
    expect(heavy).toEqual([]);
    expect(reached.size).toBeGreaterThan(5); // the watch saw the entry's own modules
    const built = [...reached].filter((url) => url.includes("/dist/pi/"));
    if ("PI_MCP_CORE" in mode) expect(built).toEqual([]);
    else expect(built).toContain(pathToFileURL(join(REPO_ROOT, "dist/pi/entry.mjs")).href);
    process.stdout.write(`thin entry: ${reached.size} modules, factory with 500 cached tools ${factoryMs.toFixed(1)} ms\n`);
  },
);
