import type { ServerEntry } from "../kernel/settings.ts";

/** The request timeouts of one server, as settings give them (its own, else the top-level ones). */
interface Timeouts {
  readonly requestTimeoutMs?: number;
  readonly requestDeadlineMs?: number;
}

export interface RequestTimeouts {
  /** What every request is given: restarted by progress, never past the deadline. */
  readonly timeoutMs: number;
  /** The most one request may take in all. */
  readonly deadlineMs: number;
  /** The requestTimeoutMs as set, when it is above the deadline and was cut to it. */
  readonly cutFromMs?: number;
}

/**
 * A server's request timeouts in effect. No request outlasts its deadline, so
 * a requestTimeoutMs above requestDeadlineMs is cut to the deadline (the
 * deadline is the bound a person set on a request's whole time; a longer
 * timeout never lengthens it), and `cutFromMs` says so for whoever shows it.
 */
export function requestTimeouts(topLevel: Required<Timeouts>, own: Timeouts | undefined): RequestTimeouts {
  const deadlineMs = own?.requestDeadlineMs ?? topLevel.requestDeadlineMs;
  const writtenMs = own?.requestTimeoutMs ?? topLevel.requestTimeoutMs;
  return writtenMs > deadlineMs ? { timeoutMs: deadlineMs, deadlineMs, cutFromMs: writtenMs } : { timeoutMs: writtenMs, deadlineMs };
}

/** `entry`'s timeouts in effect, from its definition as written (also when it did not validate: a number there still counts). */
export function entryTimeouts(config: Required<Timeouts>, entry: ServerEntry): RequestTimeouts {
  const own = (field: unknown) => (typeof field === "number" ? field : undefined);
  return requestTimeouts(config, {
    requestTimeoutMs: own(entry.written.requestTimeoutMs),
    requestDeadlineMs: own(entry.written.requestDeadlineMs),
  });
}
