// Servers behind the supergateway bridge (pinned devDependency), in a real Pi
// and in `pi-mcp test`.
//
// A stateless bridge starts a fresh server process for every HTTP request.
// The notifier fixture announces a tool-list change once it is initialized
// and again before every list it answers, so each list pi-mcp asks for
// through the bridge comes back with change notices on its own response
// stream (a stateless bridge has no other stream: what a process announces
// outside a request, e.g. for the client's `notifications/initialized`, is
// lost). Each of those notices asks for one more re-list, without end: what
// the re-list pace and the bounded waits are for. The fixture's events file
// counts the lists it served, so the tests see the notices take effect.
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RELIST_BURST } from "../../src/runtime/relist.ts";
import { expectPacedToolLists } from "../helpers/relists.ts";
import { fixturePath, startSupergateway, type RunningServer } from "../helpers/servers.ts";
import { nodeBinary, projectPath, runProcess } from "../helpers/tmp.ts";
import { eventually } from "../helpers/wait.ts";
import { mcpInRpc, NODE, REPO_ROOT, runPi, startPiRpc, usePiHome } from "./harness/pi.ts";

const home = usePiHome();
const CLI = join(REPO_ROOT, "cli/index.ts");
/** The `/mcp wait` timeout the tests give: the wait must end well before it. */
const WAIT_MS = 20_000;
/** `/mcp status`'s line for the bridged server once it is noisy (the line may wrap). */
const NOISY =
  /^sg: connected, 1 tools, protocol 2025-06-18, noisy: \d+ change\s+notices\s+in\s+the\s+last\s+minute,\s+re-listed\s+at\s+most\s+every\s+\d+\s+s$/m;

const running: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.stop()));
});

/** The notifier behind a stateless bridge, writing the lists it serves to the test home's events file, configured as "sg"; resolves with that file. */
async function noisyBridge(): Promise<string> {
  const events = join(home.home, "notifier-events.jsonl");
  const server = await startSupergateway(`FIXTURE_EVENTS=${events} FIXTURE_NOTIFY_AT_START=1 ${NODE} ${fixturePath("notifier")}`);
  running.push(server);
  await home.writeSettings({ mcp: { servers: { sg: { url: server.url } } } });
  return events;
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
  it("lets /mcp wait return in a real Pi long before its timeout, after re-listing what the notices announced, with the server connected and its tools offered", async () => {
    const events = await noisyBridge();
    const run = await runPi({
      home: home.home,
      cwd: home.cwd,
      extensions: [REPO_ROOT],
      args: ["-p", `/mcp wait --timeout ${WAIT_MS}`, "/mcp status"],
      timeoutMs: 90_000,
    });
    const exitedAt = Date.now();
    expect(run.timedOut).toBe(false);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^sg: connected, 1 tools, protocol 2025-06-18/m);
    expect(run.stdout).not.toMatch(/Still connecting|still being re-listed/);
    const lists = await expectPacedToolLists(events, exitedAt);
    // The notices reached pi-mcp through the bridge: the connect's own list came with them, and
    // /mcp wait waited for the re-list they asked for.
    expect(lists.length).toBeGreaterThanOrEqual(2);
    // From the server's first list (the wait was under way by then) to Pi's exit: far below the
    // wait's timeout, which a wait for a catalog that never settles would reach.
    expect(exitedAt - lists[0]!.at).toBeLessThan(WAIT_MS / 2);
  }, 120_000);

  it("keeps re-listing a live Pi's catalog at the re-list pace, and /mcp status says the server is noisy", async () => {
    const events = await noisyBridge();
    const rpc = await startPiRpc({ home: home.home, cwd: home.cwd, extensions: [REPO_ROOT] });
    try {
      expect(await mcpInRpc(rpc, `wait --timeout ${WAIT_MS}`)).toMatch(/^sg: connected, 1 tools/m);
      // Noisy once the pace has held a re-list back: the burst was spent on re-lists the notices asked for.
      const status = await eventually(
        async () => {
          const text = await mcpInRpc(rpc, "status");
          return NOISY.test(text) && text;
        },
        60_000,
        () => `sg never became noisy; ${rpc.stderr().slice(-500)}`,
      );
      const lists = await expectPacedToolLists(events);
      expect(lists.length).toBeGreaterThan(RELIST_BURST);
      expect(Number(/noisy: (\d+) change/.exec(status)![1])).toBeGreaterThanOrEqual(RELIST_BURST);
    } finally {
      await rpc.close();
    }
  }, 120_000);

  it("passes pi-mcp test", async () => {
    await noisyBridge();
    const run = await piMcp(["test", "sg", "--json"]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).servers[0]).toMatchObject({ name: "sg", ok: true, tools: 1 });
  }, 120_000);
});
