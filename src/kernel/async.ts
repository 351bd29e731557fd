/*
 * Helpers for work that runs on its own time: background work whose failure
 * must not escape, waits that a signal ends, waits for a change, deadlines.
 */

/**
 * Work nobody awaits (timers, notification handlers, re-lists, closes):
 * started here, its failure — a rejection or a synchronous throw — goes to
 * `onError`, never to the process. A server's misbehaviour must not become an
 * unhandled rejection, which ends Pi.
 */
export function inBackground(work: () => unknown, onError: (error: unknown) => void): void {
  const report = (error: unknown) => {
    try {
      onError(error);
    } catch {
      // The reporter itself failed (a log of a session that is gone): nothing is left to tell.
    }
  };
  try {
    const result = work();
    if (isPromiseLike(result)) result.then(undefined, report);
  } catch (error) {
    report(error);
  }
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | undefined)?.then === "function";
}

/**
 * Settles as soon as `signal` aborts (with `reason()`), whether or not the
 * work noticed; without a signal it is the work itself. For waits on shared
 * work (a cached listing, a provider request) that one caller may give up on.
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined, reason: () => unknown = () => signal?.reason): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) return Promise.reject(reason());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(reason());
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

/**
 * Wakes waiters at each change of something that is watched (a connection's
 * state, say): a wait is for an event, bounded by a time that only a stuck
 * wait reaches.
 */
export class Changes {
  private readonly waiters = new Set<() => void>();

  /** Something changed: every waiter looks again. */
  notify(): void {
    for (const wake of [...this.waiters]) wake();
  }

  /** Resolves at the next change, or after `timeoutMs`. */
  next(timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, Math.max(0, timeoutMs));
      this.waiters.add(wake);
    });
  }

  /** Resolves once `holds()` is true (looked at after each change) or the time is up; says whether it holds. */
  async until(holds: () => boolean, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!holds() && Date.now() < deadline) await this.next(deadline - Date.now());
    return holds();
  }
}

/** `work`, or a rejection with `onTimeout()` once `ms` have passed (the timer never outlives the work). */
export function withDeadline<T>(work: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
