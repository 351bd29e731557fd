// Memory and time limits a server cannot move, through OUR host with real
// processes: one 16 MiB message cap on every transport (stdio, Streamable HTTP
// JSON bodies and event streams, legacy SSE), messages up to it read in linear
// time on stdio, a cut Streamable HTTP response stream that fails its call at
// once (or resumes when the server numbered its events), and a total deadline
// and a sampling cap for a call a server would keep alive forever.
import { readFile } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { resolveConfig } from "../../src/config/resolve.ts";
import { checkedScope } from "../../src/config/schema.ts";
import { MAX_MESSAGE_BYTES, MAX_SAMPLING_PER_CALL } from "../../src/kernel/limits.ts";
import type { ToolOutcome } from "../../src/runtime/tool-call.ts";
import { fakeModel } from "../features/interactive-helpers.ts";
import { fixtureServer, startHost, stopAllHosts, textOf, until } from "../helpers/host.ts";
import { runFloodHost } from "../helpers/flood.ts";
import { startHttpFixture, type RunningServer } from "../helpers/servers.ts";
import { expectBystanderWorks, rejectsWithin } from "./_shared.ts";

const MiB = 1024 * 1024;
const OVER_THE_CAP = MAX_MESSAGE_BYTES + MiB;
/** Under the cap with room for the JSON-RPC envelope around the text. */
const UNDER_THE_CAP = MAX_MESSAGE_BYTES - MiB;
const json = (outcome: ToolOutcome): unknown => JSON.parse(textOf(outcome));
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
    {
      stdio: fixtureServer("big-output"),
      http: { url: http.url },
      sse: { url: `${sse.baseUrl}/sse`, transport: "sse" },
      bystander: fixtureServer("basic"),
    },
    { requestTimeoutMs: 60_000, retry: { maxRetries: 2, initialDelayMs: 100 } },
  );
  for (const server of ["stdio", "http", "sse"]) await h.waitForTools(3, { server, timeoutMs: 15_000 });
  return h;
}

describe("one message-size cap (16 MiB) on every transport", () => {
  it("a message without end is cut at the cap on stdio, Streamable HTTP (JSON body, event) and legacy SSE: each call fails naming the limit, and the host's memory stays bounded", async () => {
    const report = await runFloodHost();
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
      expect(error.message).toBe(
        `${server}/big failed: the server sent a message larger than the 16 MiB message-size limit (${where}); the connection was closed`,
      );
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
    expect(error.message).toBe(
      "remote/cut failed: the server's response stream ended before the answer arrived, and it could not be resumed",
    );
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
    expect(error.message).toBe(
      "remote/resumable failed: the server's response stream ended before the answer arrived, and it could not be resumed",
    );
    expect(h.status("remote").state).toBe("connected");
  });
});

describe("a server that keeps one tool call alive", () => {
  it("with progress alone: the call ends at its total deadline (requestDeadlineMs), not at the server's pleasure", async () => {
    const h = await startHost({ churn: fixtureServer("list-changed", {}, { requestDeadlineMs: 1_500 }) }, { requestTimeoutMs: 500 });
    await h.waitForTools(3, { server: "churn" });
    const started = Date.now();
    // 1,000 steps 100 ms apart: each progress restarts the 500 ms timeout, so the call would run 100 s.
    const error = await rejectsWithin(h.call("mcp__churn__progress", { steps: 1_000, delayMs: 100 }, { onProgress: () => {} }), 10_000);
    expect(error.message).toBe(
      "churn/progress took longer than its total deadline of 1500 ms (requestDeadlineMs; progress does not extend it)",
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_500);
    expect(h.status("churn").state).toBe("connected");
  });

  it(`with sampling: one call gets at most ${MAX_SAMPLING_PER_CALL} sampling requests answered, later ones are refused without asking the model, and the next call gets its own allowance`, async () => {
    const model = fakeModel();
    const h = await startHost({ interactive: fixtureServer("interactive", { FIXTURE_ERA: "legacy" }) }, { services: { model } });
    await h.waitForTools(1, { server: "interactive" });
    const outcomes = json(await h.call("mcp__interactive__sample_many", { times: MAX_SAMPLING_PER_CALL + 2 })) as string[];
    expect(outcomes.slice(0, MAX_SAMPLING_PER_CALL)).toEqual(Array(MAX_SAMPLING_PER_CALL).fill("ok"));
    expect(outcomes.slice(MAX_SAMPLING_PER_CALL)).toEqual(
      Array(2).fill(`error -1: sampling refused: one tool call may make at most ${MAX_SAMPLING_PER_CALL} sampling requests`),
    );
    expect(model.requests).toHaveLength(MAX_SAMPLING_PER_CALL);
    expect(h.host.server("interactive")!.log.text()).toContain(
      `sampling refused: this tool call already made ${MAX_SAMPLING_PER_CALL} sampling requests`,
    );
    expect(json(await h.call("mcp__interactive__sample_many", { times: 1 }))).toEqual(["ok"]);
    expect(model.requests).toHaveLength(MAX_SAMPLING_PER_CALL + 1);
  });

  it("with progress and sampling: the call ends at its deadline, the sampling request in flight is aborted, and no more are answered", async () => {
    // Each answer takes 300 ms; progress before each request restarts the 1 s timeout, so only the deadline ends the call.
    const model = fakeModel(
      (_request, signal) =>
        new Promise((resolve, reject) => {
          const timer = setTimeout(
            () => resolve({ model: "fake-1", content: [{ type: "text", text: "slow" }], stopReason: "endTurn" }),
            300,
          );
          const abort = () => {
            clearTimeout(timer);
            reject(new Error("aborted"));
          };
          signal.addEventListener("abort", abort, { once: true });
        }),
    );
    const h = await startHost(
      { interactive: fixtureServer("interactive", { FIXTURE_ERA: "legacy" }, { requestDeadlineMs: 2_000 }) },
      { services: { model }, requestTimeoutMs: 1_000 },
    );
    await h.waitForTools(1, { server: "interactive" });
    const started = Date.now();
    const error = await h.call("mcp__interactive__sample_many", { times: 9 }, { onProgress: () => {} }).then(
      () => undefined,
      (failure: Error) => failure,
    );
    expect(error?.message).toBe(
      "interactive/sample_many took longer than its total deadline of 2000 ms (requestDeadlineMs; progress does not extend it)",
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_000);
    expect(Date.now() - started).toBeLessThan(8_000);
    const asked = model.requests.length;
    expect(asked).toBeGreaterThan(1); // progress did keep it alive past one request timeout
    expect(asked).toBeLessThan(9);
    await until(
      () => model.signals.every((signal) => signal.aborted),
      5_000,
      () => `${model.signals.filter((signal) => !signal.aborted).length} model requests still running`,
    );
    // The server goes on asking for the call that ended: nothing more reaches the model.
    const log = () => h.host.server("interactive")!.log.text();
    await until(() => log().includes("sampling refused: the server asked outside a tool call"), 10_000, log);
    expect(model.requests.length).toBe(asked);
  }, 30_000);

  it("requestDeadlineMs is validated like every setting: a path-qualified error for a non-positive or non-integer value, top level or per server", () => {
    const config = resolveConfig(
      checkedScope("global", "/x/settings.json", { requestDeadlineMs: 0, servers: { a: { command: "node", requestDeadlineMs: 1.5 } } }),
      undefined,
      {},
      { globalPath: "/x/settings.json", projectPath: "/y/.pi/settings.json", projectTrusted: false },
    );
    expect(config.valid).toBe(false);
    expect(config.issues.map((issue) => `${issue.path}: ${issue.message}`)).toEqual([
      "mcp.requestDeadlineMs: must be positive (was 0)",
      "mcp.servers.a.requestDeadlineMs: must be an integer (was 1.5)",
    ]);
  });
});
