/**
 * What a server that never stops announcing changes may cost, read from what
 * the notifier fixture served (its FIXTURE_EVENTS file): the tool lists it
 * answered, and the most the re-list pace (src/runtime/relist.ts) lets a
 * connection ask for.
 */
import { expect } from "vitest";
import { RELIST_BURST, RELIST_INTERVAL_MS } from "../../src/runtime/relist.ts";
import { type PiHome, REPO_ROOT, runPi } from "../e2e/harness/pi.ts";
import { type FixtureEvent, fixtureEvents } from "./servers.ts";

/** The `/mcp wait` timeout the tests give: the wait must end well before it. */
export const WAIT_MS = 20_000;

/** The `tools/list` requests a fixture answered (every process of it), oldest first. */
export async function toolLists(file: string): Promise<FixtureEvent[]> {
  return (await fixtureEvents(file)).filter((event) => event.event === "tools/list");
}

/**
 * The most `tools/list` requests one connection may send from its first list
 * until `at`: that list, the burst, then one per RELIST_INTERVAL_MS (the
 * README's "at most 40 in the first minute, 30 in each after"), and one for
 * a re-list that had started by then.
 */
export function mostToolLists(firstAt: number, at: number): number {
  return 1 + RELIST_BURST + Math.ceil(Math.max(0, at - firstAt) / RELIST_INTERVAL_MS) + 1;
}

/** Asserts that the fixture answered at most the paced number of tool lists until `at` (and at least one); returns them. */
export async function expectPacedToolLists(file: string, at = Date.now()): Promise<FixtureEvent[]> {
  const lists = await toolLists(file);
  expect(lists.length).toBeGreaterThan(0);
  expect(lists.length).toBeLessThanOrEqual(mostToolLists(lists[0]!.at, at));
  return lists;
}

/**
 * `pi -p "/mcp wait --timeout WAIT_MS" "/mcp status"` in a real Pi whose
 * servers include a notifier writing `events`. Asserts that the wait settled
 * and Pi exited within half the wait's timeout of the server's first list
 * (a wait for a catalog that never settles reaches the timeout), after the
 * re-list the notices of the connect's own list asked for (so they reached
 * pi-mcp), and within the re-list pace, and that `/mcp status` then
 * matched `status`.
 */
export async function expectWaitEndsEarly(home: Pick<PiHome, "home" | "cwd">, events: string, status: RegExp): Promise<void> {
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
  expect(run.stdout).not.toMatch(/Still connecting|still being re-listed/);
  expect(run.stdout).toMatch(status);
  const lists = await expectPacedToolLists(events, exitedAt);
  expect(lists.length).toBeGreaterThanOrEqual(2);
  expect(exitedAt - lists[0]!.at).toBeLessThan(WAIT_MS / 2);
}
