// A real Pi whose MCP settings passed the shape check at an earlier start does not load arktype at
// all (src/config/shape-stamp.ts), under Pi's own module loader, and its servers work as before.
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { expect, it } from "vitest";
import { fixturePath } from "../helpers/servers.ts";
import { crashGuardEnv } from "../setup/crash-guard-env.ts";
import { NODE, REPO_ROOT, runPiWithMcp, usePiHome } from "./harness/pi.ts";

const RESOLVE_LOG = pathToFileURL(join(REPO_ROOT, "test/e2e/fixtures/resolve-log.mjs")).href;
const home = usePiHome();

/** Runs `pi -p "/mcp wait" "hi"`; what every process of the run resolved, and the tools of the model's first request. */
async function start(run: string): Promise<{ resolved: string[]; tools: string[]; stdout: string }> {
  const log = join(home.home, `resolved-${run}`);
  const result = await runPiWithMcp(home, "hi", [{ text: "done" }], {
    env: { NODE_OPTIONS: `${crashGuardEnv().NODE_OPTIONS ?? ""} --import=${RESOLVE_LOG}`, PI_MCP_RESOLVE_LOG: log },
  });
  expect(result.code, result.stderr).toBe(0);
  const files = (await readdir(home.home)).filter((name) => name.startsWith(`resolved-${run}.`));
  const resolved = (await Promise.all(files.map((name) => readFile(join(home.home, name), "utf8")))).flatMap((text) => text.split("\n"));
  return { resolved, tools: result.requests[0]?.toolNames ?? [], stdout: result.stdout };
}

const arktype = (resolved: readonly string[]) => resolved.filter((url) => url.includes("/node_modules/arktype/"));

it("the second start with unchanged MCP settings loads no arktype, and its server's tools reach the model as on the first", async () => {
  await home.writeSettings({ mcp: { servers: { basic: { command: NODE, args: [fixturePath("basic")], exposure: "direct" } } } });

  const first = await start("1");
  // The watch sees what Pi's loader imports for pi-mcp: the first start checked the settings with arktype.
  expect(arktype(first.resolved).length).toBeGreaterThan(0);
  expect(first.resolved.some((url) => url.includes("/node_modules/@modelcontextprotocol/"))).toBe(true);
  expect(first.tools).toContain("mcp__basic__echo");

  const second = await start("2");
  expect(arktype(second.resolved)).toEqual([]);
  expect(second.resolved.some((url) => url.includes("/node_modules/@modelcontextprotocol/"))).toBe(true);
  expect(second.tools).toEqual(first.tools);
  expect(second.stdout).toBe(first.stdout);
}, 120_000);
