// A server whose every tool list differs and which announces a change before
// every list it answers (the notifier fixture with FIXTURE_CHANGING: each list
// holds a new tool gen_<N>), so each re-list asks for the next, without end.
// In a real Pi and in pi-mcp every wait still ends well within its timeout:
// /mcp wait, the first request of a run without a terminal UI, pi-mcp test;
// and the re-lists the server costs stay within the re-list pace.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { expectPacedToolLists, expectWaitEndsEarly } from "../helpers/relists.ts";
import { fixtureEvents, fixturePath } from "../helpers/servers.ts";
import { piMcpInHome } from "../helpers/tmp.ts";
import { NODE, REPO_ROOT, runPi, usePiHome } from "./harness/pi.ts";

const home = usePiHome();
const AGENT_START_PROBE = join(REPO_ROOT, "test/e2e/fixtures/agent-start-probe.ts");

/** Configures the endlessly changing server as "n", with more top-level `mcp` settings; resolves with its events file. */
async function endlessServer(mcp: Record<string, unknown> = {}): Promise<string> {
  const events = join(home.home, "notifier-events.jsonl");
  const environment = { FIXTURE_EVENTS: events, FIXTURE_NOTIFY_AT_START: "1", FIXTURE_CHANGING: "1" };
  await home.writeSettings({ mcp: { ...mcp, servers: { n: { command: NODE, args: [fixturePath("notifier")], environment } } } });
  return events;
}

describe("a server that never stops changing its tool list and announcing it", () => {
  it("lets /mcp wait return in a real Pi long before its timeout, with the server connected", async () => {
    await expectWaitEndsEarly(home, await endlessServer(), /^n: connected, 2 tools, protocol 2025-06-18/m);
  }, 120_000);

  it("delays the first request of pi -p far less than firstRequestWaitMs, and that request carries the server's tools", async () => {
    const bound = 20_000;
    const events = await endlessServer({ firstRequestWaitMs: bound, connectTimeoutMs: 60_000 });
    const starts = join(home.home, "agent-starts.jsonl");
    const run = await runPi({
      home: home.home,
      cwd: home.cwd,
      extensions: [AGENT_START_PROBE, REPO_ROOT],
      args: ["-p", "hi"],
      env: { AGENT_START_EVENTS: starts },
      script: [{ text: "ok" }],
      timeoutMs: 90_000,
    });
    expect(run.timedOut).toBe(false);
    expect(run.code, run.stderr).toBe(0);
    const [start] = await fixtureEvents(starts);
    const request = run.requests[0]!;
    expect(request.at - start!.at).toBeLessThan(bound / 2);
    const tools = request.toolNames.filter((name) => name.startsWith("mcp__n__"));
    expect(tools).toContain("mcp__n__echo");
    expect(tools.filter((name) => name.startsWith("mcp__n__gen_"))).toHaveLength(1);
    await expectPacedToolLists(events);
  }, 120_000);

  it("lets pi-mcp test return within the server's connect timeout", async () => {
    const connectTimeoutMs = 20_000;
    const events = await endlessServer({ connectTimeoutMs });
    const started = Date.now();
    const run = await piMcpInHome(home, ["test", "n", "--json"]);
    expect(Date.now() - started).toBeLessThan(connectTimeoutMs);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).servers[0]).toMatchObject({ name: "n", ok: true, tools: 2 });
    await expectPacedToolLists(events);
  }, 120_000);
});
