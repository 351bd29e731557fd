/**
 * A tap that hangs is named like one that throws. The hooks every server and
 * the session's end wait for (`hostStart`, `hostShutdown`) have a deadline
 * per tap (HOOK_DEADLINES_MS, 10 s): a tap still running then fails its hook
 * with a PluginHookError naming the plugin and the hook, which takes the path
 * a throwing tap takes (a host whose `hostStart` failed opens no server and
 * says why; a `hostShutdown` that failed ends the shutdown with that error).
 * The tap given up is left to finish on its own; what it says later goes
 * nowhere. Hooks without a deadline wait for their taps as before.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { PluginHookError, TapDeadlineError } from "../../src/kernel/errors.ts";
import { HOOK_DEADLINES_MS } from "../../src/kernel/hooks.ts";
import type { PluginHost } from "../../src/kernel/host.ts";
import { Kernel, type KernelPlugin } from "../../src/kernel/kernel.ts";
import type { MappedResult, SpillRequest } from "../../src/kernel/types.ts";
import { pluginHost, stopAllHosts } from "../plugins/harness.ts";

const host = {} as PluginHost;
const never = () => new Promise<never>(() => {});

/** A promise's outcome so far, without waiting for it. */
function watch(promise: Promise<unknown>): { readonly outcome: "pending" | "resolved" | "rejected"; readonly error: unknown } {
  const state = { outcome: "pending" as "pending" | "resolved" | "rejected", error: undefined as unknown };
  promise.then(
    () => (state.outcome = "resolved"),
    (error: unknown) => {
      state.outcome = "rejected";
      state.error = error;
    },
  );
  return state;
}

afterEach(async () => {
  vi.useRealTimers();
  await stopAllHosts();
});

describe("the kernel's deadline", () => {
  it("fails a hostStart tap still running after 10 s, naming the plugin and the hook; the taps after it do not run", async () => {
    vi.useFakeTimers();
    const ran: string[] = [];
    const stuck: KernelPlugin = { name: "stuck-start", apply: (k) => k.hooks.hostStart.tapPromise("stuck-start", never) };
    const after: KernelPlugin = { name: "after", apply: (k) => k.hooks.hostStart.tap("after", () => void ran.push("after")) };
    const started = watch(new Kernel([stuck, after]).hooks.hostStart.promise(host));
    await vi.advanceTimersByTimeAsync(HOOK_DEADLINES_MS.hostStart! - 1);
    expect(started.outcome).toBe("pending");
    await vi.advanceTimersByTimeAsync(1);
    expect(started.outcome).toBe("rejected");
    expect(started.error).toBeInstanceOf(PluginHookError);
    expect(started.error).toMatchObject({
      plugin: "stuck-start",
      hook: "hostStart",
      message: 'plugin "stuck-start" failed in hook "hostStart": it did not finish within 10000 ms',
    });
    expect((started.error as Error).cause).toBeInstanceOf(TapDeadlineError);
    expect(ran).toEqual([]);
  });

  it("fails a hostShutdown tap still running after 10 s, while the other taps finish", async () => {
    vi.useFakeTimers();
    const finished: string[] = [];
    const stuck: KernelPlugin = { name: "stuck-end", apply: (k) => k.hooks.hostShutdown.tapPromise("stuck-end", never) };
    const quick: KernelPlugin = {
      name: "quick",
      apply: (k) => k.hooks.hostShutdown.tapPromise("quick", async () => void finished.push("quick")),
    };
    const ended = watch(new Kernel([stuck, quick]).hooks.hostShutdown.promise(host));
    await vi.advanceTimersByTimeAsync(HOOK_DEADLINES_MS.hostShutdown!);
    expect(ended.outcome).toBe("rejected");
    expect(ended.error).toMatchObject({ plugin: "stuck-end", hook: "hostShutdown" });
    expect(finished).toEqual(["quick"]);
  });

  it("leaves a tap that finishes in time alone, and a hook without a deadline waits as long as its tap takes", async () => {
    vi.useFakeTimers();
    const slow: KernelPlugin = {
      name: "slow",
      apply(k) {
        k.hooks.hostStart.tapPromise("slow", () => new Promise((resolve) => setTimeout(resolve, HOOK_DEADLINES_MS.hostStart! - 1)));
        k.hooks.mapResult.tapPromise("slow", (result) => new Promise((resolve) => setTimeout(() => resolve(result), 120_000)));
      },
    };
    const kernel = new Kernel([slow]);
    const started = watch(kernel.hooks.hostStart.promise(host));
    const result: MappedResult = { blocks: [], trailer: [], details: {}, isError: false };
    const mapped = watch(kernel.hooks.mapResult.promise(result, {} as never));
    await vi.advanceTimersByTimeAsync(HOOK_DEADLINES_MS.hostStart!);
    expect(started.outcome).toBe("resolved");
    expect(mapped.outcome).toBe("pending");
    await vi.advanceTimersByTimeAsync(120_000);
    expect(mapped.outcome).toBe("resolved");
  });

  it("fails a callback-style tap that never calls back, and ignores what it answers later", async () => {
    vi.useFakeTimers();
    let late: ((error?: Error | null) => void) | undefined;
    const silent: KernelPlugin = {
      name: "silent-spill",
      apply: (k) =>
        k.hooks.spill.tapAsync("silent-spill", (_request, callback) => {
          late = callback;
        }),
    };
    const kernel = new Kernel([silent], { hookDeadlinesMs: { spill: 1_000 } });
    const spilled = watch(kernel.hooks.spill.promise({} as SpillRequest));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(spilled.error).toMatchObject({
      plugin: "silent-spill",
      hook: "spill",
      message: 'plugin "silent-spill" failed in hook "spill": it did not finish within 1000 ms',
    });
    late?.(new Error("too late"));
    await vi.advanceTimersByTimeAsync(0);
    expect(spilled.outcome).toBe("rejected");
  });

  it("lets a given-up tap fail later without anyone hearing of it", async () => {
    vi.useFakeTimers();
    let reject: (error: Error) => void = () => {};
    const stuck: KernelPlugin = {
      name: "stuck",
      apply: (k) => k.hooks.hostStart.tapPromise("stuck", () => new Promise((_resolve, fail) => (reject = fail))),
    };
    const started = watch(new Kernel([stuck]).hooks.hostStart.promise(host));
    await vi.advanceTimersByTimeAsync(HOOK_DEADLINES_MS.hostStart!);
    expect(started.error).toMatchObject({ plugin: "stuck", hook: "hostStart" });
    reject(new Error("finally failed")); // an unhandled rejection here would fail this test
    await vi.advanceTimersByTimeAsync(0);
    expect((started.error as Error).message).toContain("did not finish");
  });
});

describe("a host whose plugin hangs", () => {
  const docs = {
    options: { capabilities: { tools: {} } },
    build: (server: import("@modelcontextprotocol/server").McpServer) =>
      void server.registerTool("echo", { description: "Echoes." }, async () => ({ content: [{ type: "text", text: "echo" }] })),
  };

  it("in hostStart: start() fails at the deadline naming the plugin and the hook, no server is opened, and the host still shuts down", async () => {
    const stuck: KernelPlugin = { name: "stuck-start", apply: (k) => k.hooks.hostStart.tapPromise("stuck-start", never) };
    const h = await pluginHost([stuck], { docs }, { start: false, hookDeadlinesMs: { hostStart: 200 } });
    await expect(h.host.start()).rejects.toMatchObject({
      plugin: "stuck-start",
      hook: "hostStart",
      message: 'plugin "stuck-start" failed in hook "hostStart": it did not finish within 200 ms',
    });
    expect(await h.host.settled(10_000)).toBe(true);
    expect(h.host.status()).toEqual([]);
    expect(h.server("docs").connections).toBe(0);
    await h.stop();
  });

  it("in hostShutdown: the connections are closed, then shutdown() fails at the deadline naming the plugin and the hook", async () => {
    const stuck: KernelPlugin = { name: "stuck-end", apply: (k) => k.hooks.hostShutdown.tapPromise("stuck-end", never) };
    const h = await pluginHost([stuck], { docs }, { hookDeadlinesMs: { hostShutdown: 200 } });
    await h.waitForState("docs", "connected");
    const server = h.server("docs").instance();
    await expect(h.host.shutdown()).rejects.toMatchObject({ plugin: "stuck-end", hook: "hostShutdown" });
    expect(server.isConnected()).toBe(false);
  });
});
