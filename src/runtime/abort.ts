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
