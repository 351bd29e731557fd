// Quitting a real Pi never takes longer than the 5,000 ms shutdown budget
// (plus a margin for a busy machine), and leaves no server process behind,
// even when servers ignore shutdown.
import { join } from "node:path";
import { expect, it } from "vitest";
import { isAlive, until } from "../helpers/host.ts";
import { fixtureEvents, fixturePath } from "../helpers/servers.ts";
import { mcpInRpc, NODE, REPO_ROOT, startPiRpc, usePiHome } from "./harness/pi.ts";

const BUDGET_MS = 5_000;
const MARGIN_MS = 3_000;
const PATIENT = join(REPO_ROOT, "test/e2e/fixtures/patient-transport.ts");

const home = usePiHome();

it("quitting Pi with servers that ignore shutdown ends within the budget, waits for it, and kills them", async () => {
  const events = join(home.home, "events.jsonl");
  const stubborn = { command: NODE, args: [fixturePath("stubborn")], environment: { FIXTURE_EVENTS: events } };
  // `stubborn` closes through the SDK's stdio transport; `patient`'s transport (a third-party plugin) waits for it forever.
  await home.writeSettings({ mcp: { servers: { stubborn, patient: stubborn } } });
  const rpc = await startPiRpc({ home: home.home, cwd: home.cwd, extensions: [PATIENT, REPO_ROOT] });
  let pids: number[] = [];
  try {
    const status = await mcpInRpc(rpc, "wait");
    expect(status).toContain("stubborn: connected");
    expect(status).toContain("patient: connected");
    pids = (await fixtureEvents(events)).filter((event) => event.event === "start").map((event) => event.pid);
    expect(pids).toHaveLength(2);
  } finally {
    const started = performance.now();
    const exit = await rpc.close(BUDGET_MS + 20_000); // Pi's own quit (stdin closed), never our kill
    const took = performance.now() - started;
    expect(exit.signal).toBeNull();
    expect(took).toBeLessThan(BUDGET_MS + MARGIN_MS);
    // The patient transport could not finish: Pi waited for the budget, not less.
    expect(took).toBeGreaterThanOrEqual(BUDGET_MS - 100);
  }
  const seen = await fixtureEvents(events);
  for (const pid of pids)
    await until(
      () => !isAlive(pid),
      30_000,
      () => `server ${pid} outlived Pi`,
    );
  for (const pid of pids) expect(seen.filter((event) => event.pid === pid).map((event) => event.event)).toContain("stdin-end");
}, 60_000);
