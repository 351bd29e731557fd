// Memory and time limits a server cannot move, through OUR host with real
// processes: one 16 MiB message cap on every transport (stdio, Streamable HTTP
// JSON bodies and event streams, legacy SSE), messages up to it read in linear
// time on stdio, and a cut Streamable HTTP response stream that fails its
// call at once, or resumes when the server numbered its events.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_MESSAGE_BYTES } from "../../src/kernel/limits.ts";
import { fixtureServer, startHost, stopAllHosts, textOf } from "../helpers/host.ts";
import { startHttpFixture, type RunningServer } from "../helpers/servers.ts";
import { nodeBinary, projectPath, REPO_ROOT, runProcess } from "../helpers/tmp.ts";
import { expectBystanderWorks, rejectsWithin } from "./_shared.ts";

const MiB = 1024 * 1024;
const OVER_THE_CAP = MAX_MESSAGE_BYTES + MiB;
/** Under the cap with room for the JSON-RPC envelope around the text. */
const UNDER_THE_CAP = MAX_MESSAGE_BYTES - MiB;
const NAMES_THE_LIMIT = /the server sent a message larger than the 16 MiB message-size limit/;

const servers: RunningServer[] = [];
afterEach(async () => {
  await stopAllHosts();
  await Promise.allSettled(servers.splice(0).map((server) => server.stop()));
});

async function fixture(name: string): Promise<RunningServer> {
  const server = await startHttpFixture(name);
  servers.push(server);
  return server;
}

/** A host with the same big-message tools over stdio (big-output), Streamable HTTP (http-faults) and legacy SSE (sse-only). */
async function everyTransport() {
  const [http, sse] = await Promise.all([fixture("http-faults"), fixture("sse-only")]);
  const h = await startHost(
    { stdio: fixtureServer("big-output"), http: { url: http.url }, sse: { url: `${sse.baseUrl}/sse`, transport: "sse" }, bystander: fixtureServer("basic") },
    { requestTimeoutMs: 60_000, retry: { maxRetries: 2, initialDelayMs: 100 } },
  );
  for (const server of ["stdio", "http", "sse"]) await h.waitForTools(3, { server, timeoutMs: 15_000 });
  return h;
}

describe("one message-size cap (16 MiB) on every transport", () => {
  it("a message without end is cut at the cap on stdio, Streamable HTTP (JSON body, event) and legacy SSE: each call fails naming the limit, and the host's memory stays bounded", async () => {
    const [http, sse] = await Promise.all([fixture("http-faults"), fixture("sse-only")]);
    const probe = join(REPO_ROOT, "test/faults/fixtures/flood-host.ts");
    const run = await runProcess(nodeBinary(), ["--experimental-transform-types", "--no-warnings", probe, JSON.stringify({ http: http.url, sse: `${sse.baseUrl}/sse` })], {
      cwd: REPO_ROOT,
      env: { PATH: projectPath(), HOME: process.env.HOME ?? "/tmp", TMPDIR: process.env.TMPDIR ?? "/tmp" },
      timeoutMs: 120_000,
    });
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as { results: Record<string, { error: string | null; ms: number }>; baselineKiB: number; peakKiB: number; highWaterKiB: number };
    expect(Object.keys(report.results)).toEqual(["stdio", "http-json", "http-event", "sse"]);
    for (const [name, result] of Object.entries(report.results)) {
      expect(result.error, name).toMatch(NAMES_THE_LIMIT);
      expect(result.ms, name).toBeLessThan(15_000);
    }
    // The cap holds one message at a time: growth is tens of MiB, where the unbounded host grew by gigabytes.
    expect((report.peakKiB - report.baselineKiB) / 1024).toBeLessThan(200);
    expect(report.highWaterKiB / 1024).toBeLessThan(500);
  }, 150_000);

  it("a message over the cap fails only its own call over Streamable HTTP (JSON or event), and closes (then reconnects) a stdio or SSE connection; the error names the limit", async () => {
    const h = await everyTransport();
    for (const mode of ["json", "sse"]) {
      const error = await rejectsWithin(h.call("mcp__http__big", { bytes: OVER_THE_CAP, mode }), 30_000);
      expect(error.message).toMatch(new RegExp(`^http/big failed: ${NAMES_THE_LIMIT.source} \\(HTTP (response|event stream)\\)$`));
      expect(h.status("http").state).toBe("connected");
      expect(textOf(await h.call("mcp__http__echo", { text: "same connection" }))).toBe("same connection");
    }
    for (const [server, where] of [
      ["stdio", "stdio"],
      ["sse", "SSE event stream"],
    ] as const) {
      const error = await rejectsWithin(h.call(`mcp__${server}__big`, { bytes: OVER_THE_CAP }), 30_000);
      expect(error.message).toBe(`${server}/big failed: the server sent a message larger than the 16 MiB message-size limit (${where}); the connection was closed`);
      expect(h.states(server)).toContain("retrying");
      const status = await h.waitForState(server, "connected", 15_000);
      expect(status.attempts).toBe(0);
      expect(textOf(await h.call(`mcp__${server}__big`, { bytes: 5 }))).toBe("xxxxx");
    }
    await expectBystanderWorks(h);
  }, 120_000);

  it("a message just under the cap arrives whole on every transport", async () => {
    const h = await everyTransport();
    for (const [server, args] of [
      ["stdio", {}],
      ["http", { mode: "json" }],
      ["http", { mode: "sse" }],
      ["sse", {}],
    ] as const) {
      const out = await h.call(`mcp__${server}__big`, { bytes: UNDER_THE_CAP, ...args });
      expect((await readFile(out.details.spillPath as string, "utf8")).length, `${server} ${JSON.stringify(args)}`).toBe(UNDER_THE_CAP);
      expect(h.status(server).state).toBe("connected");
    }
  }, 120_000);
});

describe("stdio reads a message in linear time", () => {
  it("a 15 MiB answer is copied about once while it is read (the SDK's read buffer copies everything so far for every chunk: quadratic)", async () => {
    const bytes = 15 * MiB;
    const h = await startHost({ big: fixtureServer("big-output") }, { requestTimeoutMs: 60_000 });
    await h.waitForTools(3, { server: "big" });
    await h.call("mcp__big__big", { bytes: 1024 });
    // Counted, not timed: the bytes Buffer.concat produces in this process while the answer is read.
    const concat = Buffer.concat;
    let copied = 0;
    Buffer.concat = ((list: readonly Uint8Array[], totalLength?: number) => {
      const joined = concat(list, totalLength);
      copied += joined.length;
      return joined;
    }) as typeof Buffer.concat;
    try {
      expect((await h.call("mcp__big__big", { bytes })).details.spillPath).toBeDefined();
    } finally {
      Buffer.concat = concat;
    }
    expect(copied).toBeGreaterThanOrEqual(bytes);
    expect(copied).toBeLessThan(3 * bytes);
  }, 60_000);
});

describe("a Streamable HTTP response stream cut before its answer", () => {
  it("fails the call within about a second when the stream cannot be resumed (its events have no ids), far sooner than the request timeout", async () => {
    const http = await fixture("http-faults");
    const h = await startHost({ remote: { url: http.url } }, { requestTimeoutMs: 30_000 });
    await h.waitForTools(4, { server: "remote" });
    const started = Date.now();
    const error = await rejectsWithin(h.call("mcp__remote__cut", { mode: "sse" }), 10_000);
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(error.message).toBe("remote/cut failed: the server's response stream ended before the answer arrived, and it could not be resumed");
    expect(textOf(await h.call("mcp__remote__echo", { text: "next" }))).toBe("next");
  });

  it("resumes with Last-Event-ID when the server numbered its events: the call gets its answer", async () => {
    const http = await fixture("http-faults");
    const h = await startHost({ remote: { url: http.url } }, { requestTimeoutMs: 30_000 });
    await h.waitForTools(4, { server: "remote" });
    expect(textOf(await h.call("mcp__remote__resumable", { text: "after the cut" }))).toBe("after the cut");
    expect(((await (await fetch(`${http.baseUrl}/stats`)).json()) as { resumed: number }).resumed).toBe(1);
  });

  it("fails about a second after the cut when the server numbered its events but cannot resume them", async () => {
    const http = await fixture("http-faults");
    const h = await startHost({ remote: { url: http.url } }, { requestTimeoutMs: 30_000 });
    await h.waitForTools(4, { server: "remote" });
    const started = Date.now();
    const error = await rejectsWithin(h.call("mcp__remote__resumable", { text: "lost", resume: false }), 10_000);
    expect(Date.now() - started).toBeLessThan(2_500);
    expect(error.message).toBe("remote/resumable failed: the server's response stream ended before the answer arrived, and it could not be resumed");
    expect(h.status("remote").state).toBe("connected");
  });
});
