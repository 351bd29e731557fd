import { inBackground } from "../kernel/async.ts";

/** A task folded over a quiet window, and a way to learn when it has nothing left to do. */
export interface Coalesced {
  trigger(): void;
  /** Drops the run that is scheduled (and one asked for during a run); a later trigger runs again. */
  cancel(): void;
  /** Resolves once no run is scheduled or running (at once when idle; a cancelled task is idle). */
  idle(): Promise<void>;
}

/**
 * Runs `task` once per quiet window: calls within `windowMs` of the first
 * are folded into one run. A trigger during a run schedules exactly one more.
 * A failed run goes to `onError`; the next trigger runs again.
 */
export function coalesce(windowMs: number, task: () => Promise<void> | void, onError: (error: unknown) => void): Coalesced {
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  let again = false;
  let waiters: (() => void)[] = [];
  const busy = () => timer !== undefined || running;
  const wakeIfIdle = () => {
    if (busy()) return;
    const woken = waiters;
    waiters = [];
    for (const wake of woken) wake();
  };
  const run = async () => {
    timer = undefined;
    running = true;
    try {
      await task();
    } finally {
      running = false;
      if (again) {
        again = false;
        schedule();
      }
      wakeIfIdle();
    }
  };
  const schedule = () => {
    timer ??= setTimeout(() => inBackground(run, onError), windowMs);
  };
  return {
    trigger() {
      if (running) again = true;
      else schedule();
    },
    cancel() {
      again = false;
      if (timer) clearTimeout(timer);
      timer = undefined;
      wakeIfIdle();
    },
    idle() {
      if (!busy()) return Promise.resolve();
      return new Promise((resolve) => waiters.push(resolve));
    },
  };
}
