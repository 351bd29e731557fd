// Progress notifications reach Pi's tool row (content text and details) as
// the numbers and a short message: a server that sends 10 MB per
// notification used to have each copied into the tool update twice (96 s and
// 1.57 GB for 30 of them in RPC mode).
import { afterEach, describe, expect, it } from "vitest";
import { MAX_PROGRESS_MESSAGE_CHARS } from "../../src/kernel/limits.ts";
import type { ProgressUpdate } from "../../src/runtime/tool-call.ts";
import { fixtureServer, startHost, stopAllHosts, textOf, until } from "../helpers/host.ts";

afterEach(() => stopAllHosts());

describe("progress notifications", () => {
  it(`pass on their numbers and at most ${MAX_PROGRESS_MESSAGE_CHARS} characters of their message, however long the server's message is`, async () => {
    const h = await startHost({ churn: fixtureServer("list-changed") }, { requestTimeoutMs: 60_000 });
    await h.waitForTools(3, { server: "churn" });
    const updates: ProgressUpdate[] = [];
    const outcome = await h.call(
      "mcp__churn__progress",
      { steps: 3, delayMs: 50, messageBytes: 4 * 1024 * 1024 },
      { onProgress: (update) => updates.push(update) },
    );
    expect(textOf(outcome)).toBe("done 3");
    // The SDK may drop the last notification when the answer overtakes it; the earlier ones came 50 ms before.
    await until(
      () => updates.length >= 2,
      10_000,
      () => `${updates.length} progress updates`,
    );
    for (const [index, update] of updates.entries()) {
      expect([update.progress, update.total]).toEqual([index + 1, 3]);
      expect(update.message!.length).toBeLessThanOrEqual(MAX_PROGRESS_MESSAGE_CHARS + 1);
      expect(update.message).toMatch(new RegExp(`^step ${index + 1}x+…$`));
      expect(JSON.stringify(update).length).toBeLessThan(MAX_PROGRESS_MESSAGE_CHARS + 200);
    }
  }, 60_000);

  it("a short message passes whole", async () => {
    const h = await startHost({ churn: fixtureServer("list-changed") });
    await h.waitForTools(3, { server: "churn" });
    const updates: ProgressUpdate[] = [];
    await h.call("mcp__churn__progress", { steps: 2, delayMs: 50 }, { onProgress: (update) => updates.push(update) });
    await until(
      () => updates.length >= 1,
      10_000,
      () => `${updates.length} progress updates`,
    );
    expect(updates[0]).toEqual({ progress: 1, total: 2, message: "step 1" });
  });
});
