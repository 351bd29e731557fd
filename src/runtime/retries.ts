import { inBackground } from "../kernel/async.ts";
import type { RetryPolicy } from "../kernel/settings.ts";
import { retryDelayMs } from "./retry.ts";

/** A connection that broke sooner than this after connecting counts as a failed attempt of its own run of retries. */
export const STABLE_CONNECTION_MS = 30_000;

/**
 * A connection's retry bookkeeping: the attempts of the current run of
 * retries, when it last connected and how many attempts that took, and the
 * retry that is scheduled.
 */
export class RetryBook {
  /** Attempts in the current run of retries (0 once connected). */
  attempts = 0;
  /** When the next retry starts, while one is scheduled. */
  nextRetryAt: number | undefined;
  connectedAt: number | undefined;
  /** How many attempts the current connection took (see `broke`). */
  private attemptsToConnect = 0;
  private timer: NodeJS.Timeout | undefined;

  /** A new run of retries (a start, a renewed session). */
  restart(): void {
    this.attempts = 0;
  }

  /** An attempt begins: it counts, and no retry is scheduled any more. */
  begin(): void {
    this.attempts++;
    this.nextRetryAt = undefined;
  }

  /** The attempt connected: the run of retries ends. */
  connected(): void {
    this.attemptsToConnect = this.attempts;
    this.attempts = 0;
    this.connectedAt = Date.now();
  }

  /**
   * A live connection broke: it counts as one attempt made, after it was
   * stable; else as the attempts it took to connect, so a server that fails
   * right after every connect runs out of retries (`failed`) instead of being
   * restarted forever.
   */
  broke(): void {
    const stable = this.connectedAt !== undefined && Date.now() - this.connectedAt >= STABLE_CONNECTION_MS;
    this.attempts = stable ? 1 : Math.max(1, this.attemptsToConnect);
  }

  /** The delay before the next retry by `policy`, or undefined when the run has no retry left. */
  delayMs(policy: RetryPolicy): number | undefined {
    return this.attempts > policy.maxRetries ? undefined : retryDelayMs(policy, this.attempts);
  }

  /** Says when the next retry starts (`schedule` starts its timer). */
  plan(delayMs: number): void {
    this.nextRetryAt = Date.now() + delayMs;
  }

  /** Runs `retry` after `delayMs` (replacing a retry scheduled before); the timer never keeps Pi alive. */
  schedule(delayMs: number, retry: () => Promise<void>, report: (error: unknown) => void): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => inBackground(retry, report), delayMs);
    this.timer.unref?.();
  }

  /** No retry any more (a close). */
  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.nextRetryAt = undefined;
  }
}
