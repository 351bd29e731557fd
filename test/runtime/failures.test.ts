// Failure handling through OUR host: crashes, hangs, timeouts, protocol eras,
// and the isolation of one server's trouble from the others.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fixtureServer, startHost, stopAllHosts, textOf } from "../helpers/host.ts";
import { nodePath } from "../helpers/servers.ts";

const folders: string[] = [];
afterEach(async () => {
  await stopAllHosts();
  await Promise.all(folders.splice(0).map((folder) => rm(folder, { recursive: true, force: true })));
});

async function tempFile(name: string): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), "pi-mcp-runtime-"));
  folders.push(folder);
  return join(folder, name);
}

describe("a server that crashes mid-call", () => {
  it("fails that call with a lost-connection error, restarts by the retry policy, and the next call works", async () => {
    const startLog = await tempFile("starts.log");
    const h = await startHost(
      { crash: fixtureServer("crash", { FIXTURE_START_LOG: startLog }) },
      { retry: { maxRetries: 2, initialDelayMs: 50 } },
    );
    await h.waitForTools(2, { server: "crash" });
    const firstPid = h.status("crash").pid;
    expect(textOf(await h.call("mcp__crash__ok"))).toBe("ok");

    await expect(h.call("mcp__crash__crash")).rejects.toThrow(/crash\/crash.*connection was lost/);
    await h.waitForState("crash", "connected");
    await h.waitForTools(2, { server: "crash" });
    expect(textOf(await h.call("mcp__crash__ok"))).toBe("ok");

    const pids = (await readFile(startLog, "utf8")).trim().split("\n");
    expect(pids).toHaveLength(2);
    expect(new Set(pids).size).toBe(2);
    expect(Number(pids[0])).toBe(firstPid);
    expect(h.status("crash").pid).toBe(Number(pids[1]));
  });
});

describe("a server that exits during startup", () => {
  it("is retried by the policy like any other startup failure, then ends failed", async () => {
    const startLog = await tempFile("starts.log");
    const script = "require('node:fs').appendFileSync(process.env.START_LOG, process.pid + '\\n'); process.exit(3)";
    const h = await startHost(
      { dies: { command: nodePath(), args: ["-e", script], environment: { START_LOG: startLog } } },
      { retry: { maxRetries: 2, initialDelayMs: 50 } },
    );
    const status = await h.waitForState("dies", "failed", 30_000);
    // Two retries and no more: nothing is left pending that could start a fourth attempt.
    expect(h.states("dies")).toEqual(["connecting", "retrying", "connecting", "retrying", "connecting", "failed"]);
    expect(h.status("dies")).toMatchObject({ state: "failed", attempts: 3 });
    expect(h.status("dies").nextRetryAt).toBeUndefined();
    expect(status.cause).toBeTruthy();
    expect((await readFile(startLog, "utf8")).trim().split("\n")).toHaveLength(3);
  });
});

describe("a server that hangs", () => {
  it("that never answers initialize ends failed after connectTimeoutMs and its retries, while another server keeps working", async () => {
    const started = Date.now();
    const h = await startHost(
      {
        silent: fixtureServer("hang", { FIXTURE_HANG: "initialize" }, { connectTimeoutMs: 500 }),
        basic: fixtureServer("basic"),
      },
      { retry: { maxRetries: 1, initialDelayMs: 50 } },
    );
    await h.waitForTools(3, { server: "basic" });
    expect(textOf(await h.call("mcp__basic__echo", { text: "meanwhile" }))).toBe("meanwhile");

    const status = await h.waitForState("silent", "failed", 30_000);
    const elapsed = Date.now() - started;
    expect(h.states("silent")).toEqual(["connecting", "retrying", "connecting", "failed"]); // the first attempt and one retry
    expect(status.attempts).toBe(2);
    expect(status.cause).toMatch(/500 ms/);
    expect(elapsed).toBeGreaterThanOrEqual(2 * 500);
    expect(elapsed).toBeLessThan(8_000);
    expect(h.status("silent")).toMatchObject({ state: "failed", attempts: 2 });
    expect(h.status("silent").nextRetryAt).toBeUndefined();
    expect(textOf(await h.call("mcp__basic__echo", { text: "after" }))).toBe("after");
  });

  it("times out a tool that never answers with an error naming server, tool and limit, while other calls and servers keep working", async () => {
    const h = await startHost({
      stuck: fixtureServer("hang", {}, { requestTimeoutMs: 800 }),
      basic: fixtureServer("basic"),
    });
    await h.waitForTools(2, { server: "stuck" });
    await h.waitForTools(3, { server: "basic" });

    const started = Date.now();
    const hanging = h.call("mcp__stuck__hang");
    hanging.catch(() => undefined);
    // While that call hangs: the other server, and the same server, still answer.
    expect(textOf(await h.call("mcp__basic__echo", { text: "isolated" }))).toBe("isolated");
    expect(textOf(await h.call("mcp__stuck__slow", { ms: 10 }))).toBe("slept 10");
    await expect(hanging).rejects.toThrow(/stuck\/hang timed out after 800 ms/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(750);
    expect(h.status("stuck").state).toBe("connected");
    expect(textOf(await h.call("mcp__stuck__slow", { ms: 5 }))).toBe("slept 5");
  });
});

describe("protocol eras", () => {
  it.each(["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"])(
    "connects a 2025-era server that speaks only %s and reports that version",
    async (version) => {
      const h = await startHost({ era: fixtureServer("era-2025", { FIXTURE_PROTOCOL: version }) });
      const status = await h.waitForState("era", "connected");
      expect(status.protocolVersion).toBe(version);
      await h.waitForTools(2, { server: "era" });
      expect(textOf(await h.call("mcp__era__version"))).toContain(version);
      expect(textOf(await h.call("mcp__era__echo", { text: "legacy" }))).toBe("legacy");
    },
  );

  it("connects a server that speaks only 2026-07-28", async () => {
    const h = await startHost({ modern: fixtureServer("era-2026") });
    const status = await h.waitForState("modern", "connected");
    expect(status.protocolVersion).toBe("2026-07-28");
    await h.waitForTools(2, { server: "modern" });
    expect(textOf(await h.call("mcp__modern__era"))).toContain("2026-07-28");
  });

  it("fails an unsupported protocol version without retrying", async () => {
    const h = await startHost(
      { ancient: fixtureServer("era-2025", { FIXTURE_PROTOCOL: "2023-01-01" }) },
      { retry: { maxRetries: 3, initialDelayMs: 50 } },
    );
    const status = await h.waitForState("ancient", "failed");
    expect(status.attempts).toBe(1);
    expect(status.cause).toMatch(/2023-01-01|not supported/);
    expect(h.states("ancient")).toEqual(["connecting", "failed"]);
    expect(h.status("ancient").nextRetryAt).toBeUndefined();
    expect(h.sink.active.size).toBe(0);
  });
});
