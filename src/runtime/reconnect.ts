/*
 * A server reconnecting after an unexpected close (a crash, a dropped
 * connection, a re-list that failed, an expired HTTP session): its catalog
 * stays offered meanwhile, a request made then waits for the reconnect, and
 * one that still fails says what happened and what is being done about it.
 */
import type { ConnectionState } from "../kernel/status.ts";

/** A second for the state change to reach a waiter after the attempt's own deadline. */
const GRACE_MS = 1_000;

/**
 * How long a request made now waits for its server's reconnect: until the
 * retry that is scheduled starts (at once when an attempt is under way),
 * then that attempt, which its connect timeout bounds.
 */
export function reconnectWaitMs(nextRetryAt: number | undefined, connectTimeoutMs: number, now: number = Date.now()): number {
  return Math.max(0, (nextRetryAt ?? now) - now) + connectTimeoutMs + GRACE_MS;
}

export interface Reconnecting {
  readonly state: ConnectionState;
  /** Attempts of the current run of retries (see ServerConnection.attempts). */
  readonly attempts: number;
  readonly maxRetries: number;
  readonly nextRetryAt?: number;
}

/** "retry 1 of 2 in 1 s" while a retry is scheduled, "retry 1 of 2 under way" while it connects. */
export function retryWords(reconnecting: Reconnecting, now: number = Date.now()): string {
  if (reconnecting.state === "retrying") {
    const seconds = Math.max(0, Math.round(((reconnecting.nextRetryAt ?? now) - now) / 1000));
    return `retry ${reconnecting.attempts} of ${reconnecting.maxRetries} in ${seconds} s`;
  }
  return `retry ${Math.max(1, reconnecting.attempts - 1)} of ${reconnecting.maxRetries} under way`;
}
