import { mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { removeTemporaries, writeAtomically } from "../../src/config/atomic-file.ts";
import type { ServerLog } from "../../src/kernel/types.ts";

/** Log writes are folded for this long, or until this much is waiting. */
export const FLUSH_MS = 50;
export const FLUSH_BYTES = 64 * 1024;
/** After a failed write: the waits before each retry. Their number bounds the retries; then the file is given up. */
export const RETRY_DELAYS_MS: readonly number[] = [1_000, 5_000, 30_000];

export interface PersistOptions {
  /** The file's text: the retained log made safe exactly as `/mcp logs` shows it. */
  readonly render: () => string;
  /** Where the one line about a failed write goes (the log itself: never an Attention Notice). */
  readonly report: (line: string) => void;
  readonly retryDelaysMs?: readonly number[];
}

export interface PersistedLog {
  /** Writes what is still waiting (unless the file was given up) and stops: nothing is written after. */
  finish(): Promise<void>;
}

/**
 * Keeps a private copy of a retained log on disk (0600), rewritten at most
 * every 50 ms or 64 KiB. A failed write (a full disk) is retried after
 * 1 s, 5 s and 30 s, whatever the server writes meanwhile, and then given up:
 * the log stays in memory for `/mcp logs`. The first failure of a run of
 * failures adds one line to the log; none leaves a temporary file.
 */
export function persistLog(log: ServerLog, path: string, options: PersistOptions): PersistedLog {
  const delays = options.retryDelaysMs ?? RETRY_DELAYS_MS;
  let timer: NodeJS.Timeout | undefined;
  let pending = 0;
  let dirty = false;
  let finished = false;
  /** Failed writes in a row; the file is given up after the last retry fails. */
  let failures = 0;
  let gaveUp = false;
  let cleaned = false;
  // At most one write runs and at most one more waits: each writes the newest text, so a flood
  // costs a bounded number of rewrites, not one per 64 KiB.
  let running: Promise<void> | undefined;

  const attempt = async (): Promise<boolean> => {
    try {
      await mkdir(dirname(path), { recursive: true, mode: 0o700 });
      // A writer of this session folder that was killed (an earlier run of a resumed session) left these.
      if (!cleaned) await removeTemporaries(path);
      cleaned = true;
      await writeAtomically(path, options.render(), 0o600);
      return true;
    } catch (error) {
      failed(error);
      return false;
    }
  };
  const failed = (error: unknown) => {
    failures++;
    gaveUp = failures > delays.length;
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    if (failures === 1) {
      const retries = delays.map((ms) => `${ms / 1000} s`).join(", ");
      options.report(
        `[pi-mcp] cannot write the retained log file ${path} (${code}); trying again after ${retries}, then keeping the log in memory only (/mcp logs shows it)\n`,
      );
    }
    if (!gaveUp && !finished) timer = setTimeout(flush, delays[failures - 1]);
  };
  const write = async () => {
    do {
      dirty = false;
      if (!(await attempt())) break;
      failures = 0;
    } while (dirty && !gaveUp);
    running = undefined;
  };
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    pending = 0;
    if (gaveUp) return;
    if (running) dirty = true;
    else running = write();
  };
  let lastBytes = log.bytes + log.droppedBytes;
  log.onAppend(() => {
    const total = log.bytes + log.droppedBytes;
    pending += total - lastBytes;
    lastBytes = total;
    if (finished || gaveUp) return;
    if (failures > 0) {
      dirty = true; // a retry is already scheduled: it writes the newest text
      return;
    }
    if (pending >= FLUSH_BYTES) flush();
    else timer ??= setTimeout(flush, FLUSH_MS);
  });
  return {
    async finish() {
      if (finished) return;
      finished = true;
      if (timer !== undefined) flush();
      await running;
    },
  };
}
