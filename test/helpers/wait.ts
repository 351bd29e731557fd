import { readFile } from "node:fs/promises";

/**
 * Waiting for events, never for time: every wait here ends when the thing
 * awaited has happened, and its bound only fails a test that is really stuck.
 */

/**
 * Polls `condition` every 10 ms until it holds, for states nothing announces
 * (another process, a fake service); rejects with `describe()` after `timeoutMs`.
 * What the host announces is awaited through its events instead (`waitForState`, `waitForTools`).
 */
export async function until(
  condition: () => boolean,
  timeoutMs: number,
  describe: () => string = () => "condition not met",
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms: ${describe()}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * Like `until`, for a condition that must be asked for (a request to a server,
 * a file read): resolves with the probe's first answer that is neither
 * `undefined` nor `false`.
 */
export async function eventually<T>(
  probe: () => Promise<T | undefined | false>,
  timeoutMs: number,
  describe: () => string = () => "no answer",
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await probe();
    if (answer !== undefined && answer !== false) return answer;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms: ${describe()}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Conditions re-checked at each `notify()` (an event), each with an upper bound. */
export interface EventWaiter {
  notify(): void;
  /** Resolves once `condition` holds (checked now and at every event); rejects with `describe()` after `timeoutMs`. */
  until(condition: () => boolean, timeoutMs: number, describe: () => string): Promise<void>;
}

export function eventWaiter(): EventWaiter {
  const checks = new Set<() => void>();
  return {
    notify() {
      for (const check of [...checks]) check();
    },
    until(condition, timeoutMs, describe) {
      return new Promise((resolve, reject) => {
        const finish = (error?: unknown) => {
          clearTimeout(timer);
          checks.delete(check);
          if (error === undefined) resolve();
          else reject(error);
        };
        const check = () => {
          try {
            if (condition()) finish();
          } catch (error) {
            finish(error);
          }
        };
        const timer = setTimeout(() => finish(new Error(`timed out after ${timeoutMs} ms: ${describe()}`)), timeoutMs);
        checks.add(check);
        check();
      });
    },
  };
}

/** The text of `path` once `holds` is true of it: a file another writer fills (a write announces nothing, so it is read again). */
export function fileWhere(path: string, holds: (text: string) => boolean, timeoutMs = 15_000): Promise<string> {
  let text = "";
  return eventually(
    async () => {
      text = await readFile(path, "utf8").catch(() => "");
      return holds(text) ? text : undefined;
    },
    timeoutMs,
    () => `${path} never held what was awaited; it holds ${JSON.stringify(text.slice(-300))}`,
  );
}

/** Whether a process still exists (signal 0 checks without touching it). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
