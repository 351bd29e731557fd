/*
 * What a change notice (`notifications/tools/list_changed`,
 * `notifications/resources/list_changed`) costs: the re-list policy of one
 * connection. Notices are folded into at most one re-list per window
 * (coalesce.ts); this module bounds how many re-lists a server can ask for
 * in a minute, however many notices it sends, tells a list that came back
 * unchanged from a change, and says when a server is noisy.
 */
import type { CatalogTool } from "./catalog.ts";

/** Re-lists a server may have at once before the pace holds them back. */
export const RELIST_BURST = 10;
/** After a burst: one more re-list every this many milliseconds (at most 30 a minute) while the lists change. */
export const RELIST_INTERVAL_MS = 2_000;
/** A server whose held-back re-lists find nothing new is slowed down to one re-list per this many milliseconds. */
export const QUIET_RELIST_INTERVAL_MS = 60_000;
/** How long a server stays noisy after the pace last held one of its re-lists back. */
export const NOISY_FOR_MS = 60_000;

/**
 * A token bucket for one list of one server: RELIST_BURST re-lists at once,
 * then one per interval. The interval starts at RELIST_INTERVAL_MS; each
 * re-list that was held back and found the list unchanged doubles it (up to
 * QUIET_RELIST_INTERVAL_MS), and one that found a change restores it. So a
 * server that keeps changing its list is re-listed at most 30 times a minute
 * (40 in the first), and one that only keeps announcing changes about once
 * a minute.
 */
export class RelistPace {
  private tokens = RELIST_BURST;
  private refilledAt: number;
  private intervalMs = RELIST_INTERVAL_MS;
  private heldAt: number | undefined;
  private readonly now: () => number;

  constructor(now: () => number = Date.now) {
    this.now = now;
    this.refilledAt = now();
  }

  /** How long the next re-list must wait: 0 when it may run now (it is counted then). */
  next(): number {
    const now = this.refill();
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    this.heldAt = now;
    return Math.max(1, Math.ceil((1 - this.tokens) * this.intervalMs));
  }

  /** What the re-list found: a change restores the normal pace; nothing new while the burst is spent slows it. */
  found(changed: boolean): void {
    if (changed) this.intervalMs = RELIST_INTERVAL_MS;
    else if (this.tokens < 1) this.intervalMs = Math.min(this.intervalMs * 2, QUIET_RELIST_INTERVAL_MS);
  }

  /** Whether the pace held a re-list back within the last NOISY_FOR_MS. */
  get noisy(): boolean {
    return this.heldAt !== undefined && this.now() - this.heldAt < NOISY_FOR_MS;
  }

  /** The longest a re-list waits now once the burst is spent. */
  get intervalNowMs(): number {
    return this.intervalMs;
  }

  private refill(): number {
    const now = this.now();
    this.tokens = Math.min(RELIST_BURST, this.tokens + (now - this.refilledAt) / this.intervalMs);
    this.refilledAt = now;
    return now;
  }
}

/** Counts events (change notices) over the last minute, in one-second buckets: memory stays bounded whatever the rate. */
export class MinuteCounter {
  private readonly buckets = new Array<number>(60).fill(0);
  private readonly seconds = new Array<number>(60).fill(-1);
  private readonly now: () => number;

  constructor(now: () => number = Date.now) {
    this.now = now;
  }

  add(): void {
    const second = Math.floor(this.now() / 1000);
    const slot = second % 60;
    if (this.seconds[slot] !== second) {
      this.seconds[slot] = second;
      this.buckets[slot] = 0;
    }
    this.buckets[slot]! += 1;
  }

  /** Events in the last 60 seconds. */
  get count(): number {
    const second = Math.floor(this.now() / 1000);
    let total = 0;
    for (let slot = 0; slot < 60; slot++) if (second - this.seconds[slot]! < 60) total += this.buckets[slot]!;
    return total;
  }
}

/**
 * Whether a tool list differs from the one before it, as Pi would see it:
 * the same definitions (each holds its tool's name) is no change, in
 * whatever order the server listed them.
 */
export function toolsChanged(before: readonly CatalogTool[], after: readonly CatalogTool[]): boolean {
  if (before.length !== after.length) return true;
  const definitions = (tools: readonly CatalogTool[]) => tools.map((entry) => entry.json).sort();
  const was = definitions(before);
  return definitions(after).some((json, index) => json !== was[index]);
}
