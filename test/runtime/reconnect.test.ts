// A crash costs only the call it interrupts: while the server reconnects its
// tools stay offered, calls made meanwhile wait for it and run, a tool is
// "not offered any more" only when the server's new list lacks it, and a call
// that still fails names the crash and the retry in progress.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fixtureServer, startHost, stopAllHosts, textOf } from "../helpers/host.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "pi-mcp-reconnect-"));
});
afterEach(async () => {
  await stopAllHosts();
  await rm(dir, { recursive: true, force: true });
});

const INSTRUCTIONS = "Use ok to check the server.";

function crashServer(environment: Record<string, string> = {}) {
  return fixtureServer("crash", { FIXTURE_START_LOG: join(dir, "starts.log"), FIXTURE_INSTRUCTIONS: INSTRUCTIONS, ...environment });
}

describe("a server that crashes and comes back", () => {
  it("fails the call it interrupted naming the crash and the retry, keeps its tools and instructions offered, and runs the calls made meanwhile once it is back", async () => {
    const h = await startHost({ c: crashServer() }, { retry: { maxRetries: 2, initialDelayMs: 1_000, maxDelayMs: 1_000 } });
    await h.waitForTools(2, { server: "c" });
    await h.host.flushTools();
    expect(h.host.systemPrompt("")).toContain(INSTRUCTIONS);
    const firstPid = h.status("c").pid;

    await expect(h.call("mcp__c__crash")).rejects.toThrow(
      /^c\/crash failed: the server's connection was lost during the call \(the connection closed unexpectedly: the server process exited with code 1\); it is reconnecting \(retry 1 of 2 in 1 s\)$/,
    );
    expect(h.status("c").state).toBe("retrying");
    // Made while it reconnects: they wait for it, and run.
    const calls = await Promise.all([h.call("mcp__c__ok"), h.call("mcp__c__ok"), h.call("mcp__c__ok")]);
    expect(calls.map(textOf)).toEqual(["ok", "ok", "ok"]);
    expect(h.status("c").state).toBe("connected");
    expect(h.status("c").pid).not.toBe(firstPid);
    expect(h.states("c")).toEqual(["connecting", "connected", "retrying", "connecting", "connected"]);
    // Nothing was withdrawn meanwhile, and the Instruction Snapshot kept the server's guidance.
    await h.host.flushTools();
    expect(h.sink.deactivateCalls.flat()).toEqual([]);
    expect([...h.sink.active].sort()).toEqual(["mcp__c__crash", "mcp__c__ok"]);
    expect(h.host.systemPrompt("")).toContain(INSTRUCTIONS);
  });

  it("says a tool is not offered any more only when the server's new list lacks it", async () => {
    const h = await startHost({ c: crashServer({ FIXTURE_RESTART: "without-ok" }) }, { retry: { maxRetries: 2, initialDelayMs: 200 } });
    await h.waitForTools(2, { server: "c" });
    await expect(h.call("mcp__c__crash")).rejects.toThrow(/it is reconnecting/);
    await expect(h.call("mcp__c__ok")).rejects.toThrow('MCP tool mcp__c__ok is not offered any more: server "c" no longer lists tool "ok"');
    expect(h.status("c").state).toBe("connected");
    await h.waitUntil(() => !h.sink.active.has("mcp__c__ok"));
    expect([...h.sink.active]).toEqual(["mcp__c__crash"]);
  });

  it("lets Pi's abort end a call's wait for the reconnect", async () => {
    const h = await startHost({ c: crashServer() }, { retry: { maxRetries: 2, initialDelayMs: 60_000, maxDelayMs: 60_000 } });
    await h.waitForTools(2, { server: "c" });
    await expect(h.call("mcp__c__crash")).rejects.toThrow(/retry 1 of 2 in 60 s/);
    const abort = new AbortController();
    const call = h.call("mcp__c__ok", {}, { signal: abort.signal });
    const started = Date.now();
    abort.abort();
    await expect(call).rejects.toThrow("c/ok was cancelled");
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

describe("a server that crashes and cannot come back", () => {
  it("keeps its tools while it retries; once it fails, a call says so and its tools and instructions are withdrawn", async () => {
    const h = await startHost({ c: crashServer({ FIXTURE_RESTART: "fail" }) }, { retry: { maxRetries: 2, initialDelayMs: 300 } });
    await h.waitForTools(2, { server: "c" });
    await h.host.flushTools();
    await expect(h.call("mcp__c__crash")).rejects.toThrow(/it is reconnecting \(retry 1 of 2 in 0 s\)/);
    // Made while it retries: it waits for the retry, which fails; the call says the server is reconnecting, or failed.
    await expect(h.call("mcp__c__ok")).rejects.toThrow(
      /MCP server "c" is (reconnecting after the connection closed unexpectedly: the server process exited with code 1 \(retry 2 of 2 [^)]+\)\. The last retry failed: the server process exited with code 1 while connecting|not connected \(failed: the server process exited with code 1)/,
    );
    await h.waitForState("c", "failed");
    await h.waitUntil(() => h.sink.active.size === 0);
    await expect(h.host.callTool("mcp__c__ok", {}, {})).rejects.toThrow(
      /^MCP tool mcp__c__ok is not offered any more: MCP server "c" is failed: the server process exited with code 1 while connecting/,
    );
    expect(h.host.systemPrompt("")).not.toContain(INSTRUCTIONS);
  });
});

describe("a server killed while connected whose restart never answers the handshake", () => {
  it("fails a call made while it reconnects once the reconnect's connect timeout is spent, not later, naming the crash, the retry in progress and why the last retry failed", async () => {
    const connectTimeoutMs = 1_500;
    const retry = { maxRetries: 10, initialDelayMs: 100, maxDelayMs: 100 };
    // The gate exists for the first process only: a restart waits for it, answering nothing.
    const gate = join(dir, "gate");
    await writeFile(gate, "");
    const h = await startHost(
      { w: fixtureServer("witness", { FIXTURE_START_GATE: gate }) },
      // A request timeout far beyond the bound: the call's wait must not be measured by it.
      { connectTimeoutMs, requestTimeoutMs: 120_000, retry },
    );
    await h.waitForTools(1, { server: "w" });
    await rm(gate);
    process.kill(h.status("w").pid!, "SIGKILL");
    await h.waitForState("w", ["retrying", "connecting"]);
    const started = Date.now();
    await expect(h.call("mcp__w__count")).rejects.toThrow(
      /^MCP server "w" is reconnecting after the connection closed unexpectedly: the server process was stopped by signal SIGKILL \(retry \d+ of 10 (under way|in \d+ s)\)\. The last retry failed: connecting took longer than 1500 ms \(connectTimeoutMs\)/,
    );
    const elapsed = Date.now() - started;
    // It waited for the retry scheduled and that attempt (connectTimeoutMs, and a second for the news
    // to arrive), on a busy machine a few seconds more; never for the retries after it.
    expect(elapsed).toBeGreaterThanOrEqual(connectTimeoutMs);
    expect(elapsed).toBeLessThan(retry.maxDelayMs + connectTimeoutMs + 1_000 + 4_000);
    expect(h.status("w").state).not.toBe("failed");
  });
});
