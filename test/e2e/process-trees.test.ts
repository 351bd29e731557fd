// Local servers that are process trees, with a real Pi and the built pi-mcp:
// a wrapper script that does not exec, a server that ignores SIGTERM and its
// closed stdin, a forked helper holding the server's pipes, a double-forked
// daemon in a session of its own. Pi and `pi-mcp test` always end within the
// 5,000 ms shutdown budget (counted from the moment the server is asked to
// stop), and no process of any tree outlives them: on quit (print mode, the
// RPC input closed), `/reload` with edited definitions, a `/reload` handoff
// then `new_session` with edited ones, `/mcp reconnect`, a crash, Pi ended by SIGTERM,
// SIGINT, SIGHUP or SIGKILL; `pi-mcp test --all` and `test <server>`, with a
// server that exits before answering, and `test` ended by those signals. A
// process that left a tree on purpose and holds its pipes is not ended, and
// holds neither Pi nor `test`. (The host's other close paths, each with a
// stubborn tree: test/runtime/process-trees.test.ts.)
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CLI_BIN, nodeBinary, runProcess } from "../helpers/tmp.ts";
import { crashGuardEnv } from "../setup/crash-guard-env.ts";
import { killRecorded, stillRunning, treeEvents, treePids, treeServer, untilNoneRuns, type TreeShape } from "../helpers/trees.ts";
import { mcpInRpc, REPO_ROOT, runPi, startPiRpc, usePiHome } from "./harness/pi.ts";

/** The specification's value, on purpose not read from the code. */
const BUDGET_MS = 5_000;
const PROBE = join(REPO_ROOT, "test/e2e/harness/fixtures/probe.ts");

const home = usePiHome();
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "pi-mcp-trees-e2e-"));
});
afterEach(async () => {
  await killRecorded(Object.keys(TREES).map(events)); // a failed test leaves nothing running
  await rm(dir, { recursive: true, force: true });
});

/** Four servers, one tree shape each, all stubborn: only SIGKILL ends them. */
const TREES: Record<string, TreeShape> = {
  wrapped: { stubborn: true },
  helper: { stubborn: true, helper: true },
  daemon: { stubborn: true, daemon: true },
  unmarked: { stubborn: true, unmarked: true },
};
const events = (name: string) => join(dir, `${name}.jsonl`);
const servers = () => Object.fromEntries(Object.entries(TREES).map(([name, shape]) => [name, treeServer(events(name), shape)]));

/** The same servers with every definition edited: none can be handed to the next session. */
const editedServers = () =>
  Object.fromEntries(Object.entries(servers()).map(([name, server]) => [name, { ...server, requestTimeoutMs: 7_000 }]));

/** Every process of every tree, once all have started `count` times. */
async function allPids(count = 1): Promise<number[]> {
  return (await Promise.all(Object.entries(TREES).map(([name, shape]) => treePids(events(name), shape, count)))).flat();
}

/** When each tree's server was asked to stop (its stdin closed), by its own clock (the same machine's), in order. */
async function stdinEnds(): Promise<number[]> {
  return (await Promise.all(Object.keys(TREES).map((name) => treeEvents(events(name)))))
    .flat()
    .filter((event) => event.event === "stdin-end")
    .map((event) => event.at!)
    .sort((a, b) => a - b);
}

/** When the first server was asked to stop (its stdin closed), by its own clock (the same machine's). */
async function firstStdinEnd(): Promise<number> {
  const ends = (await Promise.all(Object.keys(TREES).map((name) => treeEvents(events(name)))))
    .flat()
    .filter((event) => event.event === "stdin-end")
    .map((event) => event.at!);
  expect(ends).toHaveLength(Object.keys(TREES).length);
  return Math.min(...ends);
}

describe("Pi", () => {
  it('pi -p "/mcp wait" "/mcp status" prints the status and exits within the budget, leaving no process of any tree', async () => {
    await home.writeSettings({ mcp: { servers: servers() } });
    const run = await runPi({ home: home.home, cwd: home.cwd, extensions: [REPO_ROOT], args: ["-p", "/mcp wait", "/mcp status"] });
    const exitedAt = Date.now();
    expect(run.timedOut).toBe(false);
    expect(run.code).toBe(0);
    for (const name of Object.keys(TREES)) expect(run.stdout).toMatch(new RegExp(`^${name}: connected, 1 tools`, "m"));
    const pids = await allPids();
    expect(stillRunning(pids)).toEqual([]);
    expect(exitedAt - (await firstStdinEnd())).toBeLessThan(BUDGET_MS);
  });

  it("/reload closes a server whose definition changed (its whole tree) and starts the new one", async () => {
    await home.writeSettings({ mcp: { servers: servers() } });
    const rpc = await startPiRpc({ home: home.home, cwd: home.cwd, extensions: [REPO_ROOT, PROBE] });
    try {
      expect(await mcpInRpc(rpc, "wait")).toMatch(/^daemon: connected/m);
      const first = await allPids();
      // Every definition edited: none can be handed to the next session.
      await home.writeSettings({ mcp: { servers: editedServers() } });
      await rpc.prompt("/probe_reload");
      expect(stillRunning(first)).toEqual([]);
      expect(await mcpInRpc(rpc, "wait")).toMatch(/^daemon: connected/m);
      const both = await allPids(2);
      expect(stillRunning(both).sort()).toEqual(both.filter((pid) => !first.includes(pid)).sort());
    } finally {
      await rpc.close(BUDGET_MS + 20_000);
    }
    expect(stillRunning(await allPids(2))).toEqual([]);
  });

  it("a session handed over at /reload keeps its trees; new_session with edited definitions ends them within the budget; the session's end (RPC input closed) ends the new ones and Pi exits within the budget", async () => {
    await home.writeSettings({ mcp: { servers: servers() } });
    const rpc = await startPiRpc({ home: home.home, cwd: home.cwd, extensions: [REPO_ROOT, PROBE] });
    try {
      expect(await mcpInRpc(rpc, "wait")).toMatch(/^daemon: connected/m);
      const first = await allPids();
      // Unchanged definitions: the next session takes the same servers, nothing is asked to stop.
      await rpc.prompt("/probe_reload");
      expect(await mcpInRpc(rpc, "wait")).toMatch(/^daemon: connected/m);
      expect(stillRunning(first)).toEqual(first);
      expect(await stdinEnds()).toEqual([]);

      await home.writeSettings({ mcp: { servers: editedServers() } });
      expect((await rpc.send({ type: "new_session" }, BUDGET_MS + 20_000)).data).toEqual({ cancelled: false });
      const replacedAt = Date.now();
      expect(stillRunning(first)).toEqual([]);
      const [asked] = await stdinEnds();
      expect(replacedAt - asked!).toBeLessThan(BUDGET_MS);
      expect(await mcpInRpc(rpc, "wait")).toMatch(/^daemon: connected/m);
      const both = await allPids(2);
      const second = both.filter((pid) => !first.includes(pid));
      expect(stillRunning(both).sort()).toEqual([...second].sort());

      const exit = await rpc.close(BUDGET_MS + 20_000);
      const exitedAt = Date.now();
      expect(exit).toEqual({ code: 0, signal: null });
      expect(stillRunning(both)).toEqual([]);
      const ends = await stdinEnds();
      expect(ends).toHaveLength(2 * Object.keys(TREES).length);
      expect(exitedAt - ends[Object.keys(TREES).length]!).toBeLessThan(BUDGET_MS);
    } finally {
      await rpc.close();
    }
  });

  it("/mcp reconnect ends the server's old tree and starts a new one", async () => {
    await home.writeSettings({ mcp: { servers: servers() } });
    const rpc = await startPiRpc({ home: home.home, cwd: home.cwd, extensions: [REPO_ROOT] });
    try {
      expect(await mcpInRpc(rpc, "wait")).toMatch(/^daemon: connected/m);
      const first = await treePids(events("daemon"), TREES.daemon!);
      const started = Date.now();
      await mcpInRpc(rpc, "reconnect daemon", BUDGET_MS + 20_000);
      await untilNoneRuns(first, Math.max(0, BUDGET_MS - (Date.now() - started)));
      expect(await mcpInRpc(rpc, "wait")).toMatch(/^daemon: connected/m);
      const both = await treePids(events("daemon"), TREES.daemon!, 2);
      expect(stillRunning(both).length).toBe(both.length - first.length);
    } finally {
      await rpc.close(BUDGET_MS + 20_000);
    }
  });

  it("a crash of a server: Pi ends what it left running within the budget and the restarted server connects", async () => {
    await home.writeSettings({ mcp: { retry: { maxRetries: 2, initialDelayMs: 50 }, servers: servers() } });
    const rpc = await startPiRpc({ home: home.home, cwd: home.cwd, extensions: [REPO_ROOT] });
    try {
      expect(await mcpInRpc(rpc, "wait")).toMatch(/^helper: connected/m);
      const first = await treePids(events("helper"), TREES.helper!);
      const server = (await treeEvents(events("helper"))).find((event) => event.role === "server")!.pid;
      const killed = Date.now();
      process.kill(server, "SIGKILL");
      // The wrapper ends with the server; the helper (holding the pipes, ignoring SIGTERM) is killed.
      await untilNoneRuns(first, BUDGET_MS);
      expect(Date.now() - killed).toBeLessThan(BUDGET_MS);
      const both = await treePids(events("helper"), TREES.helper!, 2);
      expect(await mcpInRpc(rpc, "wait")).toMatch(/^helper: connected, 1 tools/m);
      expect(stillRunning(both).length).toBe(both.length - first.length);
    } finally {
      await rpc.close(BUDGET_MS + 20_000);
    }
  });

  it("a process that left a tree on purpose and holds its server's pipes does not keep Pi from exiting within the budget", async () => {
    const escapeeEvents = join(dir, "escapee.jsonl");
    const shape = { stubborn: true, helper: true, escapee: true };
    await home.writeSettings({ mcp: { servers: { ...servers(), escapee: treeServer(escapeeEvents, shape) } } });
    try {
      const run = await runPi({ home: home.home, cwd: home.cwd, extensions: [REPO_ROOT], args: ["-p", "/mcp wait", "/mcp status"] });
      const exitedAt = Date.now();
      expect(run.timedOut).toBe(false);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^escapee: connected, 1 tools/m);
      const log = await treeEvents(escapeeEvents);
      const tree = log.filter((event) => event.role !== "escapee" && event.event === "start").map((event) => event.pid);
      expect(stillRunning([...tree, ...(await allPids())])).toEqual([]);
      const escapee = log.find((event) => event.role === "escapee")!.pid;
      expect(stillRunning([escapee])).toEqual([escapee]); // no part of the tree: left running, but not holding Pi
      expect(exitedAt - (await firstStdinEnd())).toBeLessThan(BUDGET_MS);
    } finally {
      await killRecorded([escapeeEvents]);
    }
  });

  it.each(["SIGTERM", "SIGHUP", "SIGINT", "SIGKILL"] as const)(
    "ended by %s: Pi exits at once or within the budget, and every tree is gone within the budget",
    async (signal) => {
      await home.writeSettings({ mcp: { servers: servers() } });
      const rpc = await startPiRpc({ home: home.home, cwd: home.cwd, extensions: [REPO_ROOT] });
      let exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> | undefined;
      try {
        expect(await mcpInRpc(rpc, "wait")).toMatch(/^daemon: connected/m);
        const pids = await allPids();
        const sent = Date.now();
        exited = new Promise((resolve) => rpc.child.once("close", (code, how) => resolve({ code, signal: how })));
        rpc.child.kill(signal);
        const exit = await exited;
        expect(Date.now() - sent).toBeLessThan(BUDGET_MS);
        // Pi ends its session on SIGTERM and SIGHUP (exit codes 143, 129); SIGINT and SIGKILL end it where it is.
        if (signal === "SIGTERM") expect(exit).toEqual({ code: 143, signal: null });
        if (signal === "SIGHUP") expect(exit).toEqual({ code: 129, signal: null });
        if (signal === "SIGINT" || signal === "SIGKILL") expect(exit).toEqual({ code: null, signal });
        // Killed, Pi could not wait for its servers: the watchdog ends them.
        await untilNoneRuns(pids, Math.max(0, BUDGET_MS - (Date.now() - sent)));
      } finally {
        if (!exited) await rpc.close();
      }
    },
  );
});

describe("pi-mcp test (the built binary)", () => {
  async function piMcpTest(args: string[]) {
    await home.writeSettings({ mcp: { servers: servers() } });
    const env = { PATH: process.env.PATH ?? "", HOME: home.home, PI_CODING_AGENT_DIR: home.agentDir };
    const result = await runProcess(nodeBinary(), [CLI_BIN, "test", ...args], { cwd: home.cwd, env, timeoutMs: 60_000 });
    return { ...result, exitedAt: Date.now() };
  }

  it("test --all reports every server and exits within the budget, leaving no process of any tree", async () => {
    const result = await piMcpTest(["--all"]);
    expect(result.code).toBe(0);
    for (const name of Object.keys(TREES)) expect(result.stdout).toMatch(new RegExp(`^✓ ${name}: fixture-tree 1\\.0\\.0`, "m"));
    const pids = await allPids();
    expect(stillRunning(pids)).toEqual([]);
    expect(result.exitedAt - (await firstStdinEnd())).toBeLessThan(BUDGET_MS);
  });

  it("test --all with a server that exits before answering (a stubborn helper and daemon left) and one whose pipes a process outside its tree holds: reports, exits 1 within the budget", async () => {
    const failing = { stubborn: true, exits: true, helper: true, daemon: true };
    const escaping = { stubborn: true, escapee: true };
    const failingEvents = join(dir, "failing.jsonl");
    const escapingEvents = join(dir, "escaping.jsonl");
    await home.writeSettings({
      mcp: { servers: { failing: treeServer(failingEvents, failing), escaping: treeServer(escapingEvents, escaping) } },
    });
    try {
      const env = { PATH: process.env.PATH ?? "", HOME: home.home, PI_CODING_AGENT_DIR: home.agentDir };
      const result = await runProcess(nodeBinary(), [CLI_BIN, "test", "--all"], { cwd: home.cwd, env, timeoutMs: 60_000 });
      const exitedAt = Date.now();
      expect(result.code).toBe(1);
      expect(result.stdout).toMatch(/^✗ failing: .*exited with code 3/m);
      expect(result.stdout).toMatch(/^✓ escaping: fixture-tree 1\.0\.0/m);
      // Every attempt of the failing server (the retry policy's too) and the escaping server's tree are gone.
      const failed = (await treeEvents(failingEvents)).filter((event) => event.event === "start").map((event) => event.pid);
      expect(failed.length).toBeGreaterThanOrEqual(4);
      const escaped = await treeEvents(escapingEvents);
      const tree = escaped.filter((event) => event.role !== "escapee").map((event) => event.pid);
      expect(stillRunning([...failed, ...tree])).toEqual([]);
      const escapee = escaped.find((event) => event.role === "escapee")!.pid;
      expect(stillRunning([escapee])).toEqual([escapee]);
      // The stubborn server asked to stop: its close, the failing one's, and letting go of the held pipes fit the budget.
      const end = escaped.find((event) => event.event === "stdin-end")!.at!;
      expect(exitedAt - end).toBeLessThan(BUDGET_MS);
    } finally {
      await killRecorded([failingEvents, escapingEvents]);
    }
  });

  it.each(["SIGTERM", "SIGINT", "SIGHUP", "SIGKILL"] as const)(
    "ended by %s while it waits for a server that never answers: every tree is gone within the budget",
    async (signal) => {
      const silent = { stubborn: true, silent: true, helper: true, daemon: true };
      const silentEvents = join(dir, "silent.jsonl");
      await home.writeSettings({ mcp: { connectTimeoutMs: 120_000, servers: { ...servers(), silent: treeServer(silentEvents, silent) } } });
      const env = { PATH: process.env.PATH ?? "", HOME: home.home, PI_CODING_AGENT_DIR: home.agentDir };
      const child = spawn(nodeBinary(), [CLI_BIN, "test", "--all"], {
        cwd: home.cwd,
        env: { ...env, ...crashGuardEnv(env) },
        stdio: "ignore",
      });
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.once("close", (code, how) => resolve({ code, signal: how })),
      );
      try {
        const pids = [...(await allPids()), ...(await treePids(silentEvents, silent))];
        const sent = Date.now();
        child.kill(signal);
        expect(await exited).toEqual({ code: null, signal });
        await untilNoneRuns(pids, Math.max(0, BUDGET_MS - (Date.now() - sent)));
      } finally {
        child.kill("SIGKILL");
        await killRecorded([silentEvents]);
      }
    },
  );

  it("test <server> ends that server's tree, a helper holding its pipes too, within the budget", async () => {
    const result = await piMcpTest(["helper"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^✓ helper: fixture-tree 1\.0\.0/m);
    const pids = await treePids(events("helper"), TREES.helper!);
    expect(stillRunning(pids)).toEqual([]);
    const end = (await treeEvents(events("helper"))).find((event) => event.event === "stdin-end")!.at!;
    expect(result.exitedAt - end).toBeLessThan(BUDGET_MS);
  });
});
