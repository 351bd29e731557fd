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
