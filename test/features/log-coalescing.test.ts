// The private copy of a retained log is written at most every 50 ms or when
// 64 KiB are waiting. Pure timing logic inside one process: the clock is
// vitest's fake one (setTimeout only), the writes are real writes to a real
// folder, counted as they render the file's text.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readFile } from "node:fs/promises";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { persistLog, type PersistedLog } from "../../plugins/logging/persist.ts";
import { RetainedLog } from "../../src/runtime/retained-log.ts";

const WINDOW_MS = 50;
const THRESHOLD = 64 * 1024;

let dir: string;
let writer: PersistedLog | undefined;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "pi-mcp-coalesce-"));
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
});
afterEach(async () => {
  vi.useRealTimers();
  await writer?.finish();
  writer = undefined;
  await rm(dir, { recursive: true, force: true });
});

/** A log persisted to `<dir>/server.log`, and the text of every write it made (rendered once per write). */
function persisted(): { log: RetainedLog; path: string; writes: string[] } {
  const log = new RetainedLog();
  const path = join(dir, "logs", "server.log");
  const writes: string[] = [];
  writer = persistLog(log, path, {
    render: () => {
      writes.push(log.text());
      return log.text();
    },
    report: () => undefined,
  });
  return { log, path, writes };
}

/**
 * Resolves once the file holds `marker`. The fake clock stands still meanwhile
 * (only real I/O goes on), so whatever wrote it did not need the clock.
 */
async function fileHolds(path: string, marker: string): Promise<void> {
  const deadline = performance.now() + 10_000;
  while (!(await readFile(path, "utf8").catch(() => "")).includes(marker)) {
    if (performance.now() > deadline) throw new Error(`${path} never held ${JSON.stringify(marker.slice(0, 40))} (the clock did not move)`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

it("appends are folded for 50 ms into one write; one that brings 64 KiB waiting is written at once, together with what waited", async () => {
  const { log, path, writes } = persisted();
  // 100 small appends (10 KB): nothing is written within the first 49 ms ...
  for (let i = 0; i < 100; i++) log.append(`small line ${String(i).padStart(3, "0")} ${"s".repeat(83)}\n`);
  vi.advanceTimersByTime(WINDOW_MS - 1);
  // ... and an append that brings 64 KiB waiting goes out without the clock moving, with all that waited.
  log.append(`BIG ${"b".repeat(THRESHOLD)}\n`);
  await fileHolds(path, "BIG");
  expect(writes).toHaveLength(1);
  expect(writes[0]).toContain("small line 000");
  expect(writes[0]).toContain("small line 099");

  // A small append is written when its window closes: not at 49 ms, at 50.
  log.append("WINDOWED\n");
  vi.advanceTimersByTime(WINDOW_MS - 1);
  log.append(`one byte short ${"c".repeat(THRESHOLD - 2_000)}\n`); // still below 64 KiB waiting
  vi.advanceTimersByTime(1);
  await fileHolds(path, "WINDOWED");
  expect(writes).toHaveLength(2);
  expect(writes[1]).toContain("one byte short");
});

it("the size rule counts exactly 64 KiB waiting: one byte less waits for the window, the byte that completes it writes", async () => {
  const { log, path, writes } = persisted();
  log.append(`${"x".repeat(THRESHOLD - 2)}\n`); // 65,535 bytes waiting
  log.append("Y"); // 65,536
  await fileHolds(path, "Y");
  expect(writes).toHaveLength(1);
  expect(writes[0]!.length).toBe(THRESHOLD);
  // Nothing was left waiting: the window that the first append opened writes nothing more.
  vi.advanceTimersByTime(WINDOW_MS);
  await writer!.finish();
  expect(writes).toHaveLength(1);
});
