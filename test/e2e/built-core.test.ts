// Pi runs pi-mcp's build (dist/pi/entry.mjs and the core it loads): Node loads it natively, and Pi's own
// modules reach it from the root index.ts that Pi's loader ran (src/pi/host-modules.ts), on each Pi
// version. PI_MCP_CORE=source runs the sources through Pi's loader instead, with the same outcome.
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { fixturePath } from "../helpers/servers.ts";
import { crashGuardEnv } from "../setup/crash-guard-env.ts";
import { callThenRepeat, NODE, PI_VERSIONS, REPO_ROOT, runPiWithMcp, usePiHome, type PiVersion } from "./harness/pi.ts";

const RESOLVE_LOG = pathToFileURL(join(REPO_ROOT, "test/e2e/fixtures/resolve-log.mjs")).href;
const BUILT = pathToFileURL(join(REPO_ROOT, "dist/pi/")).href;
const home = usePiHome();

/** A run in which the model calls the basic server's echo: its output, and what every process of it resolved natively. */
async function echoRun(version: PiVersion, env: Record<string, string> = {}): Promise<{ stdout: string; resolved: string[] }> {
  await home.writeSettings({ mcp: { servers: { basic: { command: NODE, args: [fixturePath("basic")], exposure: "direct" } } } });
  const log = join(home.home, `resolved-${Object.keys(env).length}`);
  const result = await runPiWithMcp(home, "echo it", callThenRepeat("mcp__basic__echo", { text: "through the core" }), {
    version,
    env: { NODE_OPTIONS: `${crashGuardEnv().NODE_OPTIONS ?? ""} --import=${RESOLVE_LOG}`, PI_MCP_RESOLVE_LOG: log, ...env },
  });
  expect(result.code, result.stderr).toBe(0);
  const files = (await readdir(home.home)).filter((name) => name.startsWith(`${log.split("/").pop()}.`));
  const resolved = (await Promise.all(files.map((name) => readFile(join(home.home, name), "utf8")))).flatMap((text) => text.split("\n"));
  return { stdout: result.stdout, resolved };
}

it("the build imports none of Pi's packages itself (an installed package has no copy of them)", async () => {
  const files = (await readdir(join(REPO_ROOT, "dist/pi"), { recursive: true })).filter((name) => name.endsWith(".mjs"));
  expect(files).toContain("entry.mjs");
  for (const name of files) {
    const text = await readFile(join(REPO_ROOT, "dist/pi", name), "utf8");
    expect(text, name).not.toMatch(/(?:from|import)\s*\(?\s*["']@earendil-works\//);
  }
});

describe.each(PI_VERSIONS)("Pi %s", (version) => {
  it("loads the built entry and core natively, and a call through them works", async () => {
    const run = await echoRun(version);
    expect(run.resolved).toContain(`${BUILT}entry.mjs`);
    // The core is a chunk of the entry's build, loaded once the session started.
    expect(run.resolved.filter((url) => url.startsWith(`${BUILT}chunks/`)).length).toBeGreaterThan(0);
    expect(run.stdout).toContain("model saw: through the core");
  });

  it("with PI_MCP_CORE=source runs the core from its sources, with the same outcome", async () => {
    const run = await echoRun(version, { PI_MCP_CORE: "source" });
    expect(run.resolved.filter((url) => url.startsWith(BUILT))).toEqual([]);
    expect(run.stdout).toContain("model saw: through the core");
  });
});
