// Servers behind the supergateway bridge (pinned devDependency), in a real Pi
// and in `pi-mcp test`.
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fixturePath, startSupergateway, type RunningServer } from "../helpers/servers.ts";
import { nodeBinary, projectPath, runProcess } from "../helpers/tmp.ts";
import { NODE, REPO_ROOT, runPi, usePiHome } from "./harness/pi.ts";

const home = usePiHome();
const CLI = join(REPO_ROOT, "cli/index.ts");

const running: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.stop()));
});

async function bridge(stdioCommand: string, options: { stateful?: boolean } = {}): Promise<RunningServer> {
  const server = await startSupergateway(stdioCommand, options);
  running.push(server);
  return server;
}

/** The pi-mcp program from source as its own process, on the test home's settings. */
function piMcp(args: string[]) {
  return runProcess(nodeBinary(), ["--experimental-transform-types", "--no-warnings", CLI, ...args], {
    cwd: home.cwd,
    env: { PATH: projectPath(), HOME: home.home, PI_CODING_AGENT_DIR: home.agentDir },
    timeoutMs: 90_000,
  });
}

describe("a stateless supergateway bridge (a fresh server process per request, each announcing a tool-list change)", () => {
  it("lets /mcp wait return in a real Pi, well within its timeout, with the server connected and its tools offered", async () => {
    const server = await bridge(`FIXTURE_NOTIFY_AT_START=1 ${NODE} ${fixturePath("notifier")}`);
    await home.writeSettings({ mcp: { servers: { sg: { url: server.url } } } });
    const run = await runPi({
      home: home.home,
      cwd: home.cwd,
      extensions: [REPO_ROOT],
      args: ["-p", "/mcp wait --timeout 20000", "/mcp status"],
      timeoutMs: 90_000,
    });
    expect(run.timedOut).toBe(false);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^sg: connected, 1 tools, protocol 2025-06-18/m);
    expect(run.stdout).not.toContain("Still connecting");
  }, 120_000);

  it("passes pi-mcp test", async () => {
    const server = await bridge(`FIXTURE_NOTIFY_AT_START=1 ${NODE} ${fixturePath("notifier")}`);
    await home.writeSettings({ mcp: { servers: { sg: { url: server.url } } } });
    const run = await piMcp(["test", "sg", "--json"]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).servers[0]).toMatchObject({ name: "sg", ok: true, tools: 1 });
  }, 120_000);
});
