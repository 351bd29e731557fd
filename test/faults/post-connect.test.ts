// Servers that connect and then fail every request, in every way (an error
// answer, a closed connection, a crash, a hang, garbage), over stdio and
// Streamable HTTP, each announcing catalog changes (tools, resources, prompts
// list_changed, a log line, a resource update) right before it fails: our host,
// the built `pi-mcp test`, and a real Pi turn must all outlive them. Nothing may
// become an unhandled rejection (vitest reports those, and the crash guard of
// test/setup fails a test whose Pi or CLI had one); every failure ends in the
// status machine and the server's retained log.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { usePiHome, runPiWithMcp, NODE, REPO_ROOT } from "../e2e/harness/pi.ts";
import { fixtureServer, startHost, stopAllHosts, textOf, until, type RawDefinition } from "../helpers/host.ts";
import { fakeServices } from "../helpers/services.ts";
import { SUBSCRIPTION_ENTRY, subscriptionEntry } from "../../plugins/resources/session-entries.ts";
import { ConnectionPool } from "../../src/runtime/pool.ts";
import { fixturePath, startHttpFixture, type RunningServer } from "../helpers/servers.ts";
import { CLI_BIN, createSandbox, nodeBinary, projectPath, runProcess } from "../helpers/tmp.ts";
import { expectBystanderWorks, rejectsWithin } from "./_shared.ts";

const MODES = ["error", "close", "crash", "hang", "garbage"] as const;
type Mode = (typeof MODES)[number];

/** Everything up to the first re-list (the second tools/list, which the change notices ask for) is answered. */
const FIRST_RELIST = { FAULT_FROM: "tools/list", FAULT_FROM_NTH: "2" };

const servers: RunningServer[] = [];
afterEach(async () => {
  await stopAllHosts();
  await Promise.allSettled(servers.splice(0).map((server) => server.stop()));
});

/** The faulty fixture over stdio. */
const stdioFaulty = (mode: Mode, when: Record<string, string>): RawDefinition => fixtureServer("faulty", { FAULT: mode, ...when });

/** The faulty fixture over Streamable HTTP (its own process: its request counter is per process). */
async function httpFaulty(mode: Mode, when: Record<string, string>): Promise<RawDefinition> {
  const server = await startHttpFixture("faulty", ["--http"], { env: { FAULT: mode, ...when } });
  servers.push(server);
  return { url: server.url };
}

/** Every mode over both transports, named `<transport>-<mode>`. */
async function everyFault(when: Record<string, string>, extra: RawDefinition = {}): Promise<Record<string, RawDefinition>> {
  const definitions: Record<string, RawDefinition> = {};
  for (const mode of MODES) {
    definitions[`stdio-${mode}`] = { ...stdioFaulty(mode, when), ...extra };
    definitions[`http-${mode}`] = { ...(await httpFaulty(mode, when)), ...extra };
  }
  return definitions;
}

describe("a re-list after list_changed that fails, in every way, on both transports", () => {
  it("never escapes: each server goes through retrying to failed with a cause, its log says why, and the others keep working", async () => {
    // The connect is answered; the re-list the change notices ask for (the second tools/list) is the first request to fail.
    const faulty = await everyFault(FIRST_RELIST);
    const h = await startHost(
      { ...faulty, bystander: fixtureServer("basic") },
      { requestTimeoutMs: 1_500, retry: { maxRetries: 1, initialDelayMs: 50 } },
    );
    for (const name of Object.keys(faulty)) {
      const status = await h.waitForState(name, "failed", 20_000);
      expect(status.cause, name).toMatch(/\S/);
      // Over HTTP the fixture's change notices precede the answer to the connect's own tools/list (a stateless
      // server has no other stream), so on a loaded machine the re-list they ask for can fail the attempt before
      // it reached `connected` (seen once in a full run): the failure is handled the same way either way.
      if (name.startsWith("stdio-")) expect(h.states(name), name).toContain("connected");
      expect(h.states(name), name).toContain("retrying");
      const log = h.host.server(name)!.log.text();
      // Either the re-list failed and broke the connection, or the connection itself went first (close, crash).
      expect(log, name).toMatch(
        /re-listing the tools after a change notice failed|closed its standard output|SSE stream disconnected|fetch failed/,
      );
    }
    await expectBystanderWorks(h);
  }, 60_000);
});

describe("a tool call on a server that then fails every request", () => {
  it.each(MODES)("fails with a clear error (%s), the change notices it sent are handled, and the others keep working", async (mode) => {
    const h = await startHost(
      {
        stdio: stdioFaulty(mode, { FAULT_FROM: "tools/call" }),
        http: await httpFaulty(mode, { FAULT_FROM: "tools/call" }),
        bystander: fixtureServer("basic"),
      },
      { requestTimeoutMs: 1_500, retry: { maxRetries: 0 } },
    );
    for (const server of ["stdio", "http"]) {
      await h.waitForTools(1, { server });
      const error = await rejectsWithin(h.call(`mcp__${server}__echo`, { text: "x" }), 6_000);
      expect(error.message).toMatch(new RegExp(`^${server}/echo (failed: \\S|timed out after 1500 ms)`));
      // The re-list its notices asked for failed too: the server ends in the status machine, not in an unhandled rejection.
      await h.waitForState(server, ["failed", "retrying"], 10_000);
    }
    await expectBystanderWorks(h);
  });
});

describe("a stdio server that closes its standard output and stays alive", () => {
  it("is lost within about a second, not at the request timeout: the call in flight fails saying so and the server is retried", async () => {
    const h = await startHost(
      { quiet: stdioFaulty("close", { FAULT_FROM: "tools/call" }) },
      { requestTimeoutMs: 30_000, retry: { maxRetries: 1, initialDelayMs: 50 } },
    );
    await h.waitForTools(1, { server: "quiet" });
    const started = Date.now();
    const error = await rejectsWithin(h.call("mcp__quiet__echo", { text: "anyone?" }), 10_000);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(error.message).toBe("quiet/echo failed: the server closed its standard output; the connection was closed");
    await h.waitUntil(() => h.states("quiet").includes("retrying"));
  });
});

describe("a plugin's background work that fails", () => {
  it("a branch change whose subscription upkeep throws (the session cannot be read) is logged to the servers' logs, and they stay connected", async () => {
    const services = fakeServices();
    const h = await startHost({ notes: stdioFaulty("error", { FAULT_FROM: "tools/call" }) }, { services });
    await h.waitForTools(1, { server: "notes" });
    await until(() => services.piTools.active.has("read_mcp_resource"), 10_000);
    services.session.entries = () => {
      throw new Error("the session's branch cannot be read");
    };
    services.session.switchBranch([]);
    await until(
      () => h.host.server("notes")!.log.text().includes("syncing the resource subscriptions failed: the session's branch cannot be read"),
      10_000,
      () => h.host.server("notes")!.log.text(),
    );
    expect(h.status("notes").state).toBe("connected");
  });
});

describe("a session handoff (/reload) with a server that stopped answering (SIGSTOP)", () => {
  it.each([
    ["2026-07-28 (a listen stream)", []],
    ["2025 (resources/subscribe)", ["--legacy"]],
  ])(
    "ends the session's subscriptions within a few seconds on %s, and hands the connection on",
    async (_era, extra) => {
      const services = fakeServices();
      services.session.append(SUBSCRIPTION_ENTRY, subscriptionEntry("subscribe", "notes", "note://a"));
      const pool = new ConnectionPool();
      const server = { command: NODE, args: [join(REPO_ROOT, "test/features/fixtures/resource-server.mjs"), ...extra] };
      const h = await startHost({ notes: server }, { services, pool, requestTimeoutMs: 60_000 });
      await h.waitForTools(1, { server: "notes" });
      await until(
        () => h.host.statusLines().some((line) => line.includes("note://a")),
        10_000,
        () => h.host.statusLines().join("\n"),
      );
      const pid = h.status("notes").pid!;
      process.kill(pid, "SIGSTOP");
      try {
        const started = Date.now();
        await h.host.shutdown(undefined, "replaced");
        // RELEASE_TIMEOUT_MS (2 s) bounds it; the 60 s request timeout does not come into it.
        expect(Date.now() - started).toBeLessThan(4_000);
        expect(pool.size).toBe(1);
      } finally {
        process.kill(pid, "SIGCONT");
        await pool.drain();
      }
    },
    30_000,
  );
});

describe("pi-mcp test (the built CLI) against servers that fail every request after connecting", () => {
  beforeAll(() => {
    if (!existsSync(CLI_BIN))
      execFileSync("unbuild", [], { cwd: REPO_ROOT, env: { ...process.env, PATH: projectPath() }, stdio: "ignore", timeout: 120_000 });
  }, 180_000);

  it("prints its one JSON document (failing servers with a cause), exits 1, and nothing goes unhandled, also when a re-list fails as it finishes", async () => {
    const box = await createSandbox();
    try {
      const definitions = { ...(await everyFault({ FAULT_AFTER: "0" })), ...prefixed("relist-", await everyFault(FIRST_RELIST)) };
      await box.writeJson(box.globalSettings, { mcp: { requestTimeoutMs: 1_500, servers: definitions } });
      const result = await runProcess(nodeBinary(), [CLI_BIN, "test", "--all", "--json"], {
        cwd: box.projectDir,
        env: box.env(),
        timeoutMs: 60_000,
      });
      expect(result.code, result.stderr).toBe(1);
      const document = JSON.parse(result.stdout) as { servers: { name: string; ok: boolean; error: string | null }[] };
      expect(document.servers.map((server) => server.name).sort()).toEqual(Object.keys(definitions).sort());
      for (const server of document.servers) {
        // A server whose re-list fails may have answered all the test asked before it failed: then it passed.
        if (!server.name.startsWith("relist-")) expect(server.ok, server.name).toBe(false);
        if (server.ok) expect(server.error, server.name).toBeNull();
        else expect(server.error, server.name).toMatch(/\S/);
      }
      expect(result.stderr).not.toMatch(/Unhandled|uncaught/i);
    } finally {
      await box.cleanup();
    }
  }, 90_000);
});

describe("a real Pi turn with servers that fail every request once called", () => {
  const home = usePiHome();

  it("keeps Pi running: each failing call is an error result for the model, the turn goes on, the healthy server answers", async () => {
    const faulty = await everyFault({ FAULT_FROM: "tools/call" }, { requestTimeoutMs: 1_500 });
    await home.writeSettings({
      mcp: { retry: { maxRetries: 0 }, servers: { ...faulty, bystander: { command: NODE, args: [fixturePath("basic")] } } },
    });
    const names = Object.keys(faulty);
    const run = await runPiWithMcp(home, "go", [
      ...names.map((name) => ({ toolCall: { name: `mcp__${name}__echo`, arguments: { text: name } } })),
      { toolCall: { name: "mcp__bystander__echo", arguments: { text: "alive" } } },
      { textFromLastToolResult: true, prefix: "model saw: " },
    ]);
    expect(run.timedOut).toBe(false);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("model saw: alive");
    const results = run.requests.at(-1)!.messages.filter((message: { role: string }) => message.role === "toolResult");
    expect(results).toHaveLength(names.length + 1);
    names.forEach((name, index) => {
      expect(results[index].isError, name).toBe(true);
      expect(textOf({ content: results[index].content, details: {}, isError: true }), name).toMatch(
        new RegExp(`${name}/echo (failed|timed out)`),
      );
    });
    expect(results.at(-1).isError).toBe(false);
  }, 120_000);
});

function prefixed(prefix: string, definitions: Record<string, RawDefinition>): Record<string, RawDefinition> {
  return Object.fromEntries(Object.entries(definitions).map(([name, definition]) => [`${prefix}${name}`, definition]));
}
