// The 5,000 ms shutdown budget (the default; no budget is passed here): a
// server that ignores shutdown is killed once the budget is spent, and
// shutdown never takes much longer. Real processes. (A real Pi quitting:
// test/e2e/shutdown.test.ts.)
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { patientTransport } from "../e2e/fixtures/patient-transport.ts";
import { createKernel } from "../../src/composition.ts";
import { DEFAULTS } from "../../src/kernel/settings.ts";
import { isAlive, startHost, stopAllHosts, until } from "../helpers/host.ts";
import { fixtureEvents, fixturePath, nodePath } from "../helpers/servers.ts";

/** The specification's value, on purpose not read from the code. */
const BUDGET_MS = 5_000;
/** Timers may fire a little late on a busy machine, never early; a stuck shutdown would take far longer. */
const MARGIN_MS = 3_000;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "pi-mcp-budget-"));
});
afterEach(async () => {
  await stopAllHosts();
  await rm(dir, { recursive: true, force: true });
});

async function events(file: string): Promise<string[]> {
  return (await fixtureEvents(file)).map((entry) => entry.event);
}

it("is 5,000 ms by default", () => {
  expect(DEFAULTS.shutdownBudgetMs).toBe(BUDGET_MS);
});

it("a server whose close never finishes is killed once the 5,000 ms budget is spent, and shutdown returns then", async () => {
  const log = join(dir, "events.jsonl");
  const stubborn = { command: nodePath(), args: [fixturePath("stubborn")], environment: { FIXTURE_EVENTS: log } };
  // A transport (a third-party plugin) whose close waits for the server to exit.
  const h = await startHost({ patient: stubborn }, { kernel: createKernel({ plugins: [patientTransport] }) });
  await h.waitForState("patient", "connected");
  const pid = h.status("patient").pid!;
  const started = performance.now();
  await h.host.shutdown();
  const took = performance.now() - started;
  // Asked to stop, it ignored both requests; the budget, not an earlier give-up, ended the wait.
  expect((await events(log)).sort()).toEqual(["sigterm", "start", "stdin-end"]);
  expect(took).toBeGreaterThanOrEqual(BUDGET_MS - 5);
  expect(took).toBeLessThan(BUDGET_MS + MARGIN_MS);
  await until(
    () => !isAlive(pid),
    30_000,
    () => `server ${pid} survived the budget`,
  );
}, 20_000);

it("with the SDK's own stdio transport a server ignoring stdin and SIGTERM is dead within the budget", async () => {
  const log = join(dir, "events.jsonl");
  const h = await startHost({ stubborn: { command: nodePath(), args: [fixturePath("stubborn")], environment: { FIXTURE_EVENTS: log } } });
  await h.waitForState("stubborn", "connected");
  const pid = h.status("stubborn").pid!;
  const started = performance.now();
  await h.host.shutdown();
  await until(
    () => !isAlive(pid),
    BUDGET_MS + MARGIN_MS,
    () => `server ${pid} is still alive`,
  );
  expect(performance.now() - started).toBeLessThan(BUDGET_MS + MARGIN_MS);
  expect(await events(log)).toEqual(["start", "stdin-end", "sigterm"]);
}, 20_000);
