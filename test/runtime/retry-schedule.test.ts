// The shared retry policy's delays (initial delay, backoff factor, cap), for
// start failures and unexpected closes, against real server processes.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { DEFAULTS } from "../../src/kernel/settings.ts";
import { retryDelayMs } from "../../src/runtime/retry.ts";
import type { ConnectionState } from "../../src/kernel/status.ts";
import { fixtureServer, startHost, stopAllHosts, textOf, until, type TestHost } from "../helpers/host.ts";
import { fixtureEvents } from "../helpers/servers.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "pi-mcp-retry-"));
});
afterEach(async () => {
  await stopAllHosts();
  await rm(dir, { recursive: true, force: true });
});

/** 150 ms, then ×2 per retry, never more than 500 ms: 150, 300, 500, 500. */
const POLICY = { maxRetries: 4, initialDelayMs: 150, backoffFactor: 2, maxDelayMs: 500 };
const SCHEDULE = [150, 300, 500, 500];
/**
 * How much earlier than the scheduled time an attempt may begin: Node measures
 * a timer from the event loop's cached clock, which lags behind Date.now() by
 * as long as the current turn has run (more on a busy machine).
 */
const TIMER_SLACK_MS = 40;

interface Transition {
  readonly state: ConnectionState;
  /** When the host reported it (Date.now() in the status callback, which runs synchronously). */
  readonly at: number;
  readonly nextRetryAt?: number;
}

/** A witness server whose starts are refused while `fail` exists, and every state change the host reports. */
async function watchedHost(fail: string): Promise<{ h: TestHost; transitions: Transition[]; refusedAt(): Promise<number[]> }> {
  const events = join(dir, "events.jsonl");
  const transitions: Transition[] = [];
  let h: TestHost | undefined;
  const record = () => {
    const status = h?.host.server("w")?.status();
    const last = transitions.at(-1);
    if (!status || (last?.state === status.state && last.nextRetryAt === status.nextRetryAt)) return;
    transitions.push({ state: status.state, at: Date.now(), ...(status.nextRetryAt !== undefined && { nextRetryAt: status.nextRetryAt }) });
  };
  h = await startHost(
    { w: fixtureServer("witness", { FIXTURE_EVENTS: events, FIXTURE_FAIL_WHILE: fail }) },
    { retry: POLICY, events: { statusChanged: record }, start: false },
  );
  h.host.start();
  const refusedAt = async () => (await fixtureEvents(events)).filter((event) => event.event === "refused").map((event) => event.at);
  return { h, transitions, refusedAt };
}

/** Each retry waits exactly its scheduled delay (announced, then honoured), and the next attempt starts no earlier. */
function expectSchedule(transitions: readonly Transition[], schedule: readonly number[]): void {
  const retrying = transitions.filter((transition) => transition.state === "retrying");
  // Announced exactly: nextRetryAt is set from the same clock reading the failure was handled at.
  // (The callback reads the clock a moment later, more on a loaded machine: up to the timer
  // slack less is the same delay; the schedule's steps are much further apart than that.)
  const announced = retrying.map((transition, i) => {
    const ms = transition.nextRetryAt! - transition.at;
    return ms <= schedule[i]! && ms >= schedule[i]! - TIMER_SLACK_MS ? schedule[i]! : ms;
  });
  expect(announced).toEqual(schedule);
  for (const [i, transition] of retrying.entries()) {
    const next = transitions[transitions.indexOf(transition) + 1];
    expect(next?.state, `after retry ${i + 1}`).toBe("connecting");
    const waited = next!.at - transition.at;
    expect(waited, `retry ${i + 1} began after ${waited} ms`).toBeGreaterThanOrEqual(schedule[i]! - TIMER_SLACK_MS);
    expect(waited).toBeLessThan(schedule[i]! + 10_000);
  }
}

it("the default policy: 1,000 ms, ×1.5 per retry, capped at 30,000 ms", () => {
  const delays = Array.from({ length: 12 }, (_, i) => retryDelayMs(DEFAULTS.retry, i + 1));
  expect(delays).toEqual([1000, 1500, 2250, 3375, 5063, 7594, 11391, 17086, 25629, 30000, 30000, 30000]);
});

it("start failures retry after the initial delay, growing by the backoff factor up to the cap, then fail", async () => {
  const fail = join(dir, "refuse");
  await writeFile(fail, "");
  const { h, transitions, refusedAt } = await watchedHost(fail);
  await h.waitForState("w", "failed", 20_000);
  expect(transitions.filter((transition) => transition.state === "connecting")).toHaveLength(1 + POLICY.maxRetries);
  expectSchedule(transitions, SCHEDULE);
  // The processes themselves started no earlier than their retry was due.
  const starts = await refusedAt();
  expect(starts).toHaveLength(1 + POLICY.maxRetries);
  const due = transitions.filter((transition) => transition.state === "retrying").map((transition) => transition.nextRetryAt!);
  for (const [i, at] of starts.slice(1).entries()) expect(at).toBeGreaterThanOrEqual(due[i]! - TIMER_SLACK_MS);
});

it("an unexpected close retries on the same schedule, starting again from the initial delay", async () => {
  const fail = join(dir, "refuse");
  const { h, transitions } = await watchedHost(fail);
  await h.waitForTools(4, { server: "w" });
  await writeFile(fail, ""); // from now on every start is refused
  expect(textOf(await h.call("mcp__w__restart", {}))).toBe("restarting");
  await h.waitForState("w", "failed", 20_000);
  const afterCrash = transitions.slice(transitions.findIndex((transition) => transition.state === "connected") + 1);
  expect(afterCrash[0]?.state).toBe("retrying");
  expectSchedule(afterCrash, SCHEDULE);

  // The schedule starts over once a connection succeeded in between.
  await rm(fail);
  await h.host.reconnect("w");
  await h.waitForState("w", "connected");
  const reconnected = transitions.length;
  await h.call("mcp__w__restart", {});
  await until(
    () => transitions.slice(reconnected).some((transition) => transition.state === "connected"),
    30_000,
    () => JSON.stringify(transitions.slice(reconnected)),
  );
  expectSchedule(transitions.slice(reconnected), [SCHEDULE[0]!]);
});
