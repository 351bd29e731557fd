import { inBackground } from "../kernel/async.ts";

/** A task folded over a window, and a way to learn when what was asked for has been done. */
export interface Coalesced {
  trigger(): void;
  /** Drops the run that is scheduled (and one asked for during a run); a later trigger runs again. */
  cancel(): void;
  /**
   * Resolves once every trigger made before this call has been followed by a
   * finished run (one that started after it), or was cancelled; at once when
   * nothing is scheduled. A run the pace holds back is not waited for, and
   * neither are triggers made after this call: a task that is triggered
   * again and again (a server announcing changes without end) cannot keep a
   * waiter waiting.
   */
  caughtUp(): Promise<void>;
}

export interface CoalesceOptions {
  /**
   * Asked when a window ends, before its run starts: how many milliseconds
   * the run must still wait (0: it starts now, and the pace counts it). A run
   * held back folds every trigger until it starts; its timer never keeps the
   * process alive.
   */
  readonly pace?: () => number;
}

/**
 * Runs `task` at most once per window: triggers within `windowMs` of the
 * first are folded into one run, which starts when the window ends (a window
 * counts from its first trigger, so triggers that never stop still get a run
 * every window, never none). A trigger during a run schedules exactly one
 * more. A failed run goes to `onError`; the next trigger runs again.
 */
export function coalesce(
  windowMs: number,
  task: () => Promise<void> | void,
  onError: (error: unknown) => void,
  options: CoalesceOptions = {},
): Coalesced {
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  let again = false;
  /** Whether the scheduled run is held back by the pace. */
  let held = false;
  /** Triggers so far, and how many of them the last finished run covered (those made before it started). */
  let requested = 0;
  let covered = 0;
  let waiters: { readonly target: number; readonly wake: () => void }[] = [];
  const caught = (target: number) => covered >= target || (!running && (timer === undefined || held));
  const wakeCaughtUp = () => {
    const woken = waiters.filter((waiter) => caught(waiter.target));
    if (woken.length === 0) return;
    waiters = waiters.filter((waiter) => !woken.includes(waiter));
    for (const waiter of woken) waiter.wake();
  };
  const run = async () => {
    running = true;
    const through = requested;
    try {
      await task();
    } finally {
      running = false;
      covered = Math.max(covered, through);
      if (again) {
        again = false;
        schedule();
      }
      wakeCaughtUp();
    }
  };
  const windowEnded = () => {
    timer = undefined;
    const wait = options.pace?.() ?? 0;
    if (wait > 0) {
      held = true;
      timer = setTimeout(() => inBackground(windowEnded, onError), wait);
      timer.unref?.();
      wakeCaughtUp();
      return;
    }
    held = false;
    return run();
  };
  const schedule = () => {
    timer ??= setTimeout(() => inBackground(windowEnded, onError), windowMs);
  };
  return {
    trigger() {
      requested++;
      if (running) again = true;
      else schedule();
    },
    cancel() {
      again = false;
      held = false;
      if (timer) clearTimeout(timer);
      timer = undefined;
      wakeCaughtUp();
    },
    caughtUp() {
      const target = requested;
      if (caught(target)) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ target, wake: resolve }));
    },
  };
}
