/**
 * Runs `task` once per quiet window: calls within `windowMs` of the first
 * are folded into one run. A trigger during a run schedules exactly one more.
 */
export function coalesce(windowMs: number, task: () => Promise<void> | void): { trigger(): void; cancel(): void } {
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  let again = false;
  let cancelled = false;
  const run = async () => {
    timer = undefined;
    if (cancelled) return;
    running = true;
    try {
      await task();
    } finally {
      running = false;
      if (again && !cancelled) {
        again = false;
        schedule();
      }
    }
  };
  const schedule = () => {
    timer ??= setTimeout(() => void run(), windowMs);
  };
  return {
    trigger() {
      if (cancelled) return;
      if (running) again = true;
      else schedule();
    },
    cancel() {
      cancelled = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}
