// Shared pieces of the fault suite (test/faults): every test runs real server
// processes through OUR host and checks the same four things — the host keeps
// running, every other server keeps working, the failing call gets a clear
// error, and nothing on disk is lost or left half-written.
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { expect } from "vitest";
import { textOf, type TestHost } from "../helpers/host.ts";

/** Calls the bystander's echo (a `basic` fixture configured as `bystander`) and expects the echo back. */
export async function expectBystanderWorks(h: TestHost, text = "still here"): Promise<void> {
  // (Its first connect may still be under way on a busy machine; once connected it must stay so.)
  await h.waitForTools(3, { server: "bystander", timeoutMs: 15_000 });
  expect(h.status("bystander").state).toBe("connected");
  expect(textOf(await h.call("mcp__bystander__echo", { text }))).toBe(text);
}

/** Resolves with the rejection of `work`, failing the test if it resolves or takes longer than `ms`. */
export async function rejectsWithin(work: Promise<unknown>, ms: number): Promise<Error> {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    work.then(
      (value) => ({ kind: "resolved" as const, value }),
      (error: unknown) => ({ kind: "rejected" as const, error }),
    ),
    new Promise<{ kind: "hung" }>((resolve) => (timer = setTimeout(() => resolve({ kind: "hung" }), ms))),
  ]);
  clearTimeout(timer);
  if (outcome.kind === "hung") throw new Error(`still pending after ${ms} ms`);
  if (outcome.kind === "resolved") throw new Error(`resolved instead of failing: ${JSON.stringify(outcome.value).slice(0, 300)}`);
  expect(Date.now() - started).toBeLessThan(ms);
  expect(outcome.error).toBeInstanceOf(Error);
  return outcome.error as Error;
}

/** Every file below `folder` (relative paths), for "nothing half-written" checks. */
export async function filesUnder(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(folder.length + 1))
    .sort();
}
