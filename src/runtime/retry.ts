import type { RetryPolicy } from "../kernel/settings.ts";

/** Delay before retry number `attempt` (1-based): capped exponential backoff. */
export function retryDelayMs(policy: RetryPolicy, attempt: number): number {
  const delay = policy.initialDelayMs * policy.backoffFactor ** Math.max(0, attempt - 1);
  return Math.min(Math.round(delay), policy.maxDelayMs);
}
