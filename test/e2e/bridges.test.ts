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
import { expectPacedToolLists, expectWaitEndsEarly, WAIT_MS } from "../helpers/relists.ts";
import { fixturePath, startSupergateway, type RunningServer } from "../helpers/servers.ts";
import { piMcpInHome } from "../helpers/tmp.ts";
import { eventually } from "../helpers/wait.ts";
import { mcpInRpc, NODE, REPO_ROOT, startPiRpc, usePiHome } from "./harness/pi.ts";

const home = usePiHome();
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

describe("a stateless supergateway bridge (a fresh server process per request, each announcing a tool-list change)", () => {
  it("lets /mcp wait return in a real Pi long before its timeout, after re-listing what the notices announced, with the server connected and its tools offered", async () => {
    await expectWaitEndsEarly(home, await noisyBridge(), /^sg: connected, 1 tools, protocol 2025-06-18/m);
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
    const run = await piMcpInHome(home, ["test", "sg", "--json"]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).servers[0]).toMatchObject({ name: "sg", ok: true, tools: 1 });
  }, 120_000);
});
