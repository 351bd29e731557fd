// A server that never stops announcing list changes: every wait still returns
// within its time, a list that comes back unchanged changes nothing, the
// re-lists it can cause are bounded per minute, and status says it is noisy.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { coalesce } from "../../src/runtime/coalesce.ts";
import {
  MinuteCounter,
  NOISY_FOR_MS,
  QUIET_RELIST_INTERVAL_MS,
  RELIST_BURST,
  RELIST_INTERVAL_MS,
  RelistPace,
} from "../../src/runtime/relist.ts";
import { formatStatus } from "../../src/commands/runtime.ts";
import { fixtureServer, startHost, stopAllHosts } from "../helpers/host.ts";
import { expectPacedToolLists, toolLists, WAIT_MS } from "../helpers/relists.ts";
import { fixtureEvents } from "../helpers/servers.ts";
import { eventually } from "../helpers/wait.ts";

afterEach(stopAllHosts);

/** A clock the test moves. */
function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

/** Runs re-lists back to back for `ms` of simulated time, as a server that notifies on every list makes them; returns their times. */
function relistFor(pace: RelistPace, time: ReturnType<typeof clock>, ms: number, changed: (index: number) => boolean): number[] {
  const end = time.now() + ms;
  const runs: number[] = [];
  while (time.now() < end) {
    const wait = pace.next();
    if (wait > 0) {
      time.advance(wait);
      continue;
    }
    runs.push(time.now());
    pace.found(changed(runs.length));
    time.advance(50); // the next notice's window
  }
  return runs;
}

describe("the re-list pace", () => {
  it("lets a burst through, then at most one re-list per interval while lists change: 40 in the first minute, 30 in each after", () => {
    const time = clock();
    const pace = new RelistPace(time.now);
    const first = relistFor(pace, time, 60_000, () => true);
    expect(first.length).toBeLessThanOrEqual(RELIST_BURST + 60_000 / RELIST_INTERVAL_MS);
    expect(first.length).toBeGreaterThan(RELIST_BURST);
    for (let minute = 0; minute < 5; minute++)
      expect(relistFor(pace, time, 60_000, () => true).length).toBeLessThanOrEqual(60_000 / RELIST_INTERVAL_MS + 1);
    expect(pace.noisy).toBe(true);
  });

  it("slows a server whose re-lists find nothing new down to one a minute, and a change restores the pace", () => {
    const time = clock();
    const pace = new RelistPace(time.now);
    relistFor(pace, time, 5 * 60_000, () => false);
    const quiet = relistFor(pace, time, 5 * 60_000, () => false);
    expect(quiet.length).toBeLessThanOrEqual(6);
    expect(pace.intervalNowMs).toBe(QUIET_RELIST_INTERVAL_MS);
    pace.found(true);
    expect(pace.intervalNowMs).toBe(RELIST_INTERVAL_MS);
  });

  it("is not noisy while it never held a re-list back, and stops being noisy a minute after the last time it did", () => {
    const time = clock();
    const pace = new RelistPace(time.now);
    for (let i = 0; i < RELIST_BURST; i++) expect(pace.next()).toBe(0);
    expect(pace.noisy).toBe(false);
    expect(pace.next()).toBeGreaterThan(0);
    expect(pace.noisy).toBe(true);
    time.advance(NOISY_FOR_MS);
    expect(pace.noisy).toBe(false);
  });

  it("counts the events of the last minute only", () => {
    const time = clock(0);
    const counter = new MinuteCounter(time.now);
    for (let i = 0; i < 1000; i++) counter.add();
    time.advance(30_000);
    counter.add();
    expect(counter.count).toBe(1001);
    time.advance(30_500);
    expect(counter.count).toBe(1);
    time.advance(30_000);
    expect(counter.count).toBe(0);
  });
});

describe("a coalesced task that triggers itself on every run", () => {
  it("lets a waiter catch up after the runs that cover its triggers, not after every later one", async () => {
    let runs = 0;
    const task = coalesce(
      5,
      () => {
        runs++;
        if (runs < 10_000) refresh.trigger(); // a server that announces a change while it answers the list
      },
      (error) => {
        throw error;
      },
    );
    const refresh = task;
    refresh.trigger();
    await refresh.caughtUp();
    expect(runs).toBeGreaterThanOrEqual(1);
    expect(runs).toBeLessThanOrEqual(2);
    refresh.cancel();
  });

  it("does not wait for a run the pace holds back", async () => {
    let runs = 0;
    const refresh = coalesce(
      5,
      () => {
        runs++;
      },
      (error) => {
        throw error;
      },
      { pace: () => 3_600_000 },
    );
    refresh.trigger();
    await refresh.caughtUp();
    expect(runs).toBe(0);
    refresh.cancel();
  });
});

describe("a server that announces a change before every list it answers", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "pi-mcp-noisy-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("lets settled and flushTools return, re-lists a bounded number of times, registers nothing again, and status says it is noisy", async () => {
    const events = join(dir, "events.jsonl");
    const h = await startHost({ n: fixtureServer("notifier", { FIXTURE_EVENTS: events, FIXTURE_NOTIFY_AT_START: "1" }) });
    const started = Date.now();
    expect(await h.host.settled(20_000)).toBe(true);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(await h.host.flushTools()).toBe(true);
    expect(h.status("n").state).toBe("connected");
    // Each re-list is answered as it was: nothing is registered, activated or deactivated again.
    const status = await eventually(
      async () => h.status("n").noisy !== undefined && h.status("n"),
      30_000,
      () => "never noisy",
    );
    const lists = (await fixtureEvents(events)).filter((event) => event.event === "tools/list");
    // The first list at connect, the burst, and perhaps the one just started.
    expect(lists.length).toBeLessThanOrEqual(RELIST_BURST + 2);
    expect(h.sink.registerCalls).toHaveLength(1);
    expect(h.sink.deactivateCalls).toHaveLength(0);
    expect([...h.sink.active]).toEqual(["mcp__n__echo"]);
    expect(status.noisy!.notices).toBeGreaterThanOrEqual(RELIST_BURST);
    expect(formatStatus(h.config, [status]).replace(/\n\s+/g, " ")).toMatch(
      /^n: connected, 1 tools, protocol 2025-06-18, noisy: \d+ change notices in the last minute, re-listed at most every \d+ s$/,
    );
    // Held back: the next re-list comes no sooner than the pace allows.
    const heldAt = Date.now();
    await eventually(
      async () => (await fixtureEvents(events)).filter((event) => event.event === "tools/list").length > lists.length,
      30_000,
      () => "no re-list after the burst",
    );
    expect(Date.now() - heldAt).toBeGreaterThanOrEqual(RELIST_INTERVAL_MS / 2);
    expect(await h.host.settled(5_000)).toBe(true);
  }, 90_000);

  it("lets settled and flushTools return long before their timeouts when every list differs, offers each new list, and re-lists at the pace", async () => {
    const events = join(dir, "events.jsonl");
    const h = await startHost({
      n: fixtureServer("notifier", { FIXTURE_EVENTS: events, FIXTURE_NOTIFY_AT_START: "1", FIXTURE_CHANGING: "1" }),
    });
    const waits = async () => {
      for (const wait of [() => h.host.settled(WAIT_MS), () => h.host.flushTools(WAIT_MS)]) {
        const started = Date.now();
        expect(await wait()).toBe(true);
        expect(Date.now() - started).toBeLessThan(WAIT_MS / 2);
      }
    };
    await waits();
    expect(h.status("n").state).toBe("connected");
    // The burst goes at once (each list differs, so each reaches Pi), then the pace holds re-lists back.
    await h.waitUntil(() => h.status("n").noisy !== undefined, 30_000);
    await waits();
    const burst = await expectPacedToolLists(events);
    // While the lists keep changing the server is re-listed one list per interval, never more.
    await eventually(
      async () => (await toolLists(events)).length >= burst.length + 3,
      30_000,
      () => "no re-lists after the burst",
    );
    const lists = await expectPacedToolLists(events);
    await waits();
    // Every list differed (gen_<N>, N the lists answered before it): the newest reached Pi, the ones before it were withdrawn.
    await h.host.flushTools();
    const generations = [...h.sink.active].filter((name) => name.startsWith("mcp__n__gen_"));
    expect(generations).toHaveLength(1);
    expect(Number(generations[0]!.slice("mcp__n__gen_".length))).toBeGreaterThanOrEqual(lists.length - 1);
    expect(h.sink.active.has("mcp__n__echo")).toBe(true);
  }, 90_000);

  it("bounds settled by its timeout when an announced re-list never comes back", async () => {
    const h = await startHost({ n: fixtureServer("notifier", { FIXTURE_HANG_RELIST: "1" }) }, { requestTimeoutMs: 120_000 });
    await h.waitForState("n", "connected");
    const events = h.host.server("n")!;
    expect(events.state).toBe("connected");
    const started = Date.now();
    expect(await h.host.settled(1_500)).toBe(false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(await h.host.flushTools(500)).toBe(false);
  }, 60_000);
});
