/**
 * Context benchmark (npm run bench:context): how many bytes of tool
 * definitions Pi sends to the model provider with server-everything plus nine
 * generated servers of 40 tools each, with every server `direct` versus
 * `deferred`.
 *
 *   node --experimental-transform-types --no-warnings bench/context.ts
 *
 * Method: a real Pi 1.6 run with the faux model provider. The faux provider
 * records the tool definitions of every request exactly as the provider
 * receives them (name, description, JSON Schema parameters); the figure is the
 * UTF-8 length of their JSON for the first request after all servers are
 * connected (`pi -p "/mcp wait" "hi"`). Tokens are estimated as bytes / 4.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { makePiHome, NODE, REPO_ROOT, runPi } from "../test/e2e/harness/pi.ts";

const EVERYTHING = join(REPO_ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const MANY = join(REPO_ROOT, "test/fixtures/servers/many-tools.mjs");

function servers(exposure: "direct" | "deferred"): Record<string, unknown> {
  const generated = Object.fromEntries(
    Array.from({ length: 9 }, (_, index) => [
      `gen${index + 1}`,
      { command: NODE, args: [MANY], environment: { FIXTURE_TOOLS: "40", FIXTURE_PAGE_SIZE: "40" }, exposure },
    ]),
  );
  return { everything: { command: NODE, args: [EVERYTHING, "stdio"], exposure }, ...generated };
}

async function measure(exposure: "direct" | "deferred"): Promise<{ tools: number; mcpTools: number; bytes: number }> {
  const home = await makePiHome();
  try {
    await writeFile(join(home.agentDir, "settings.json"), JSON.stringify({ mcp: { servers: servers(exposure) } }));
    const run = await runPi({ home: home.home, cwd: home.cwd, extensions: [REPO_ROOT], args: ["-p", "/mcp wait --timeout 60000", "hi"], script: [{ text: "ok" }], timeoutMs: 120_000 });
    const request = run.requests[0];
    if (run.code !== 0 || !request) throw new Error(`pi exited ${run.code}: ${run.stderr.slice(-500)}`);
    const bytes = Buffer.byteLength(JSON.stringify(request.tools), "utf8");
    return { tools: request.tools.length, mcpTools: request.tools.filter((tool) => tool.name.startsWith("mcp__")).length, bytes };
  } finally {
    await home.cleanup();
  }
}

const direct = await measure("direct");
const deferred = await measure("deferred");
const table = [
  "| exposure | tools declared | MCP tools declared | bytes of tool definitions | ≈ tokens (bytes/4) |",
  "| --- | --- | --- | --- | --- |",
  `| direct | ${direct.tools} | ${direct.mcpTools} | ${direct.bytes} | ${Math.round(direct.bytes / 4)} |`,
  `| deferred | ${deferred.tools} | ${deferred.mcpTools} | ${deferred.bytes} | ${Math.round(deferred.bytes / 4)} |`,
  "",
  `Deferred exposure sends ${((1 - deferred.bytes / direct.bytes) * 100).toFixed(1)}% fewer bytes of tool definitions (server-everything + 9 × 40 generated tools, Pi 1.6, faux provider).`,
].join("\n");
console.log(table);
await writeFile(join(REPO_ROOT, "bench", "CONTEXT.md"), `# Context benchmark\n\n${table}\n`);
