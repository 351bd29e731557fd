/**
 * What a server that never stops announcing changes may cost, read from what
 * the notifier fixture served (its FIXTURE_EVENTS file): the tool lists it
 * answered, and the most the re-list pace (src/runtime/relist.ts) lets a
 * connection ask for.
 */
import { expect } from "vitest";
import { RELIST_BURST, RELIST_INTERVAL_MS } from "../../src/runtime/relist.ts";
import { type FixtureEvent, fixtureEvents } from "./servers.ts";

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
