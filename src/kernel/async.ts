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
export function untilAborted<T>(
  work: Promise<T>,
  signal: AbortSignal | undefined,
  reason: () => unknown = () => signal?.reason,
): Promise<T> {
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

  /** Resolves at the next change, after `timeoutMs`, or when `signal` aborts. */
  next(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        signal?.removeEventListener("abort", wake);
        resolve();
      };
      const timer = setTimeout(wake, Math.max(0, timeoutMs));
      this.waiters.add(wake);
      signal?.addEventListener("abort", wake, { once: true });
    });
  }

  /** Resolves once `holds()` is true (looked at after each change), the time is up or `signal` aborted; says whether it holds. */
  async until(holds: () => boolean, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!holds() && Date.now() < deadline && !signal?.aborted) await this.next(deadline - Date.now(), signal);
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

/**
 * Waits for `work` at most `ms` (Infinity: as long as it takes) and says
 * whether it settled in time; what is still running then finishes in the
 * background, its failure going to `onError`.
 */
export async function settlesWithin(work: Promise<unknown>, ms: number, onError: (error: unknown) => void): Promise<boolean> {
  const settled = work.then(
    () => true,
    (error: unknown) => {
      onError(error);
      return true;
    },
  );
  if (ms === Number.POSITIVE_INFINITY) return settled;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, ms));
  });
  const inTime = await Promise.race([settled, late]);
  clearTimeout(timer);
  return inTime;
}

/**
 * Long work in Pi's process in turns: a loop that runs
 * `if (turns.due()) await turns.pause()` between its steps blocks Pi for
 * about `turnMs` plus one step at most, whatever the number of steps. A turn
 * lasts at least `minSteps` steps, so work of fewer steps never waits (it is
 * done synchronously, however slowly a loaded machine runs it).
 */
export class Turns {
  private readonly turnMs: number;
  private readonly minSteps: number;
  private started = performance.now();
  private steps = 0;

  // No parameter properties: the Pi entry loads this module with Node's type stripping.
  constructor(turnMs: number, minSteps = 1) {
    this.turnMs = turnMs;
    this.minSteps = minSteps;
  }

  /** Counts one step done; says whether this turn is over (the caller pauses before its next step). */
  due(): boolean {
    return ++this.steps >= this.minSteps && performance.now() - this.started >= this.turnMs;
  }

  /** Resolves after a turn of the event loop (setImmediate: input, timers and I/O run there); a new turn starts then. */
  async pause(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.started = performance.now();
    this.steps = 0;
  }
}
