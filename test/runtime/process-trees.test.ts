// Every local server is a process tree (a wrapper that starts the real server
// without exec, helpers it forks, a daemon that double-forked into a session
// of its own): every path that ends a server ends its whole tree, SIGTERM then
// SIGKILL, within the 5,000 ms shutdown budget. Real processes, through our
// host: quit, /mcp reconnect, failed attempts (never answering, exiting before
// answering), crashes, settings that disable, edit or remove a server, an idle
// lazy server, a retained connection not taken, a handoff that cannot retain.
// (A real Pi and the built CLI: test/e2e/process-trees.test.ts.)
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConnectionPool } from "../../src/runtime/pool.ts";
import { killTreeOf, ProcessTree, TREE_VARIABLE } from "../../src/safety/process-tree.ts";
import { createRedactor } from "../../src/safety/text.ts";
import { buildConfig, fixtureServer, startHost, stopAllHosts, textOf } from "../helpers/host.ts";
import {
  killRecorded,
  rolesOf,
  stillRunning,
  treeEnvironment,
  treeEvents,
  treePids,
  treeServer,
  untilNoneRuns,
  TREE_MJS,
  WRAP_SH,
  type TreeShape,
} from "../helpers/trees.ts";
import { nodePath } from "../helpers/servers.ts";

/** The specification's value, on purpose not read from the code. */
const BUDGET_MS = 5_000;

let dir: string;
let events: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "pi-mcp-trees-"));
  events = join(dir, "events.jsonl");
});
afterEach(async () => {
  await stopAllHosts();
  await killRecorded([events]); // a failed test leaves nothing running
  await rm(dir, { recursive: true, force: true });
});

/** The tree's processes once all have started. */
const pidsOf = (shape: TreeShape, count = 1) => treePids(events, shape, count);

const SHAPES: [string, TreeShape][] = [
  ["a wrapper (sh, no exec) around a server that ignores SIGTERM and its closed stdin", { stubborn: true }],
  ["a stubborn server whose forked helper holds its stdout and stderr", { stubborn: true, helper: true }],
  ["a stubborn server with a double-forked daemon in a session of its own", { stubborn: true, daemon: true }],
  ["a stubborn server whose child has an environment of its own (no PI_MCP_TREE)", { stubborn: true, unmarked: true }],
  ["a well-behaved server that leaves a helper and a daemon running when its stdin closes", { helper: true, daemon: true }],
];

describe("closing a server ends its whole tree", () => {
  it.each(SHAPES)("on quit: %s", async (_, shape) => {
    const h = await startHost({ t: treeServer(events, shape) });
    await h.waitForState("t", "connected");
    const pids = await pidsOf(shape);
    expect(pids).toHaveLength(rolesOf(shape).length);
    const started = performance.now();
    await h.host.shutdown();
    const took = performance.now() - started;
    expect(stillRunning(pids)).toEqual([]);
    expect(took).toBeLessThan(BUDGET_MS);
    if (shape.stubborn) {
      // Asked politely first (stdin closed), then SIGTERM to every process of the tree (all ignored it), then SIGKILL.
      const log = await treeEvents(events);
      expect(log.filter((event) => event.event === "stdin-end").map((event) => event.role)).toEqual(["server"]);
      expect(
        log
          .filter((event) => event.event === "sigterm")
          .map((event) => event.role)
          .sort(),
      ).toEqual(
        rolesOf(shape)
          .filter((role) => role !== "wrapper")
          .sort(),
      );
    }
  });

  it("on /mcp reconnect: the old tree ends, a new one serves", async () => {
    const shape = { stubborn: true, helper: true, daemon: true };
    const h = await startHost({ t: treeServer(events, shape) });
    await h.waitForState("t", "connected");
    const first = await pidsOf(shape);
    await h.host.reconnect("t");
    await h.waitForState("t", "connected");
    expect(stillRunning(first)).toEqual([]);
    const both = await pidsOf(shape, 2);
    expect(stillRunning(both).sort()).toEqual(both.filter((pid) => !first.includes(pid)).sort());
    expect(textOf(await h.call("mcp__t__echo", { text: "again" }))).toBe("again");
  });

  it("after a failed attempt (a server that never answers): each attempt's tree ends before the next starts", async () => {
    const shape = { stubborn: true, silent: true, helper: true, daemon: true };
    // 3 s: time enough for the daemon's two node starts on a loaded machine before the attempt is given up.
    const h = await startHost({ t: treeServer(events, shape) }, { connectTimeoutMs: 3_000, retry: { maxRetries: 1, initialDelayMs: 50 } });
    await h.waitForState("t", "failed", 30_000);
    const pids = await pidsOf(shape, 2);
    expect(stillRunning(pids)).toEqual([]);
  });

  it("after a crash: what the server left running ends, and the restarted tree serves", async () => {
    const shape = { daemon: true };
    const h = await startHost({ t: treeServer(events, shape) }, { retry: { maxRetries: 2, initialDelayMs: 50 } });
    await h.waitForState("t", "connected");
    const first = await pidsOf(shape);
    const server = (await treeEvents(events)).find((event) => event.role === "server")!.pid;
    process.kill(server, "SIGKILL");
    await untilNoneRuns(first, BUDGET_MS);
    await h.waitForState("t", "connected");
    await pidsOf(shape, 2);
    expect(textOf(await h.call("mcp__t__echo", { text: "back" }))).toBe("back");
  });

  it.each([
    ["whose helper holds the pipes: the connection is lost at once, the helper ends", { helper: true }],
    [
      "of a stubborn tree (a helper holding the pipes and a daemon, both ignoring SIGTERM): all of it ends within the budget",
      { stubborn: true, helper: true, daemon: true },
    ],
  ] as const)("after a crash %s, and the restarted tree serves", async (_, shape) => {
    const h = await startHost({ t: treeServer(events, shape) }, { requestTimeoutMs: 60_000, retry: { maxRetries: 2, initialDelayMs: 50 } });
    await h.waitForState("t", "connected");
    const first = await pidsOf(shape);
    const server = (await treeEvents(events)).find((event) => event.role === "server")!.pid;
    process.kill(server, "SIGKILL");
    // Not when a call times out (60 s): the server's stdin ended with its process.
    await h.waitForState("t", ["retrying", "connecting"], BUDGET_MS);
    // The wrapper ends with its server; what ignores SIGTERM ends by the SIGKILL that follows.
    await untilNoneRuns(first, BUDGET_MS);
    await h.waitForState("t", "connected");
    await pidsOf(shape, 2);
    expect(textOf(await h.call("mcp__t__echo", { text: "back" }))).toBe("back");
  });

  it("after failed attempts of a server that exits before answering, leaving a stubborn helper (holding its pipes) and daemon", async () => {
    const shape = { stubborn: true, exits: true, helper: true, daemon: true };
    const h = await startHost({ t: treeServer(events, shape) }, { connectTimeoutMs: 60_000, retry: { maxRetries: 1, initialDelayMs: 50 } });
    // Failed long before the connect timeout: nothing can answer once the server process is gone.
    await h.waitForState("t", "failed", 30_000);
    const pids = await pidsOf(shape, 2);
    await untilNoneRuns(pids, BUDGET_MS);
    expect(h.status("t").cause).toMatch(/exited with code 3/);
  });

  it.each([
    ["disabled", { enabled: false }],
    ["edited", { requestTimeoutMs: 7_000 }],
  ] as const)("when its definition is %s in the settings while it runs", async (_, change) => {
    const shape = { stubborn: true, helper: true, daemon: true };
    const h = await startHost({ t: treeServer(events, shape) });
    await h.waitForState("t", "connected");
    const pids = await pidsOf(shape);
    const next = buildConfig({ t: treeServer(events, shape, change) });
    const started = performance.now();
    await h.host.applyConfig(next, createRedactor(next.secrets));
    expect(performance.now() - started).toBeLessThan(BUDGET_MS);
    expect(stillRunning(pids)).toEqual([]);
  });

  it("when it is removed from the settings while it runs", async () => {
    const shape = { stubborn: true, helper: true, daemon: true };
    const h = await startHost({ t: treeServer(events, shape), other: fixtureServer("basic") });
    await h.waitForState("t", "connected");
    const pids = await pidsOf(shape);
    const next = buildConfig({ other: fixtureServer("basic") });
    const started = performance.now();
    await h.host.applyConfig(next, createRedactor(next.secrets));
    expect(performance.now() - started).toBeLessThan(BUDGET_MS);
    expect(stillRunning(pids)).toEqual([]);
  });

  it("when a lazy server has been idle for its idle time", async () => {
    const shape = { stubborn: true, helper: true, daemon: true };
    const h = await startHost({ t: treeServer(events, shape, { lifecycle: "lazy", idleTimeoutMs: 300 }) });
    const pids = await pidsOf(shape);
    await h.waitForState("t", "idle", 30_000);
    // The idle close ends the tree as any close does (within the budget of its start, 300 ms after the last use).
    await untilNoneRuns(pids, BUDGET_MS);
  });

  it("on quit, a process that left the tree on purpose and holds the server's pipes does not hold the host past the budget", async () => {
    const shape = { stubborn: true, helper: true, escapee: true };
    const h = await startHost({ t: treeServer(events, shape) });
    await h.waitForState("t", "connected");
    await pidsOf(shape);
    const log = await treeEvents(events);
    const escapee = log.find((event) => event.role === "escapee")!.pid;
    const tree = log.filter((event) => event.role !== "escapee").map((event) => event.pid);
    const started = performance.now();
    await h.host.shutdown();
    expect(performance.now() - started).toBeLessThan(BUDGET_MS);
    expect(stillRunning(tree)).toEqual([]);
    // Not ended (it is no part of the tree: README), but its pipes are let go of; afterEach kills it.
    expect(stillRunning([escapee])).toEqual([escapee]);
  });

  it("when a connection retained for the next session is not taken in time", async () => {
    const shape = { stubborn: true, helper: true, daemon: true };
    const pool = new ConnectionPool(300);
    const h = await startHost({ t: treeServer(events, shape) }, { pool });
    await h.waitForState("t", "connected");
    const pids = await pidsOf(shape);
    await h.host.shutdown(undefined, "replaced");
    expect(pool.size).toBe(1);
    expect(stillRunning(pids)).toEqual(pids);
    // Retention (300 ms) plus the close (within the budget).
    await untilNoneRuns(pids, 300 + BUDGET_MS);
    expect(pool.size).toBe(0);
  });

  it("at a handoff that cannot retain it (its definition changed), within the budget", async () => {
    const shape = { stubborn: true, helper: true, daemon: true };
    const pool = new ConnectionPool();
    const h = await startHost({ t: treeServer(events, shape) }, { pool });
    await h.waitForState("t", "connected");
    const pids = await pidsOf(shape);
    const edited = buildConfig({ t: treeServer(events, shape, { requestTimeoutMs: 7_000 }) });
    const started = performance.now();
    await h.host.shutdown(undefined, "replaced", { settings: edited });
    expect(performance.now() - started).toBeLessThan(BUDGET_MS);
    expect(pool.size).toBe(0);
    expect(stillRunning(pids)).toEqual([]);
  });
});

describe("the process tree mechanism", () => {
  /** Starts a tree outside any host, with `marker` in its environment (as the stdio transport does). */
  function startTree(shape: TreeShape, marker: string): number {
    return spawnTree(shape, marker).pid!;
  }
  function spawnTree(shape: TreeShape, marker: string) {
    const child = spawn("sh", [WRAP_SH, nodePath(), TREE_MJS], {
      env: { PATH: process.env.PATH ?? "", ...treeEnvironment(events, shape), [TREE_VARIABLE]: marker },
      stdio: ["pipe", "ignore", "ignore"],
    });
    child.on("error", () => undefined);
    return child;
  }

  it("a tree whose server exits when its stdin closes ends at that exit, never waiting out the polite time", async () => {
    const shape = { helper: true, daemon: true };
    const tree = new ProcessTree();
    const child = spawnTree(shape, tree.marker);
    tree.adopt(child.pid!);
    const pids = await pidsOf(shape);
    const rootExited = new Promise((resolve) => child.once("exit", resolve));
    child.stdin!.end();
    // A polite time and a SIGTERM grace longer than the test's timeout: only the server's exit can end the wait, and
    // what it left running (the helper, the daemon) gets SIGTERM at once.
    await tree.end({ politeMs: 600_000, termMs: 600_000, rootExited });
    expect(stillRunning(pids)).toEqual([]);
  });

  it("finds every process of the tree by its marker, also the daemon that left the process group and session", async () => {
    const shape = { stubborn: true, helper: true, daemon: true };
    const tree = new ProcessTree();
    tree.adopt(startTree(shape, tree.marker));
    const pids = await pidsOf(shape);
    expect(await tree.members()).toEqual(expect.arrayContaining(pids));
    await tree.end({ politeMs: 0, termMs: 200 });
    expect(stillRunning(pids)).toEqual([]);
  });

  it("without /proc (the `ps` fallback of other systems) finds the descendants of the server process", async () => {
    const shape = { stubborn: true, helper: true };
    const tree = new ProcessTree({ strategy: "ps" });
    tree.adopt(startTree(shape, tree.marker));
    const pids = await pidsOf(shape);
    expect(await tree.members()).toEqual(expect.arrayContaining(pids));
    await tree.end({ politeMs: 0, termMs: 200 });
    await untilNoneRuns(pids, 2_000);
  });

  it("killTreeOf kills the whole tree of a process it started, and only the process itself otherwise", async () => {
    const shape = { stubborn: true, helper: true, daemon: true };
    const tree = new ProcessTree();
    const root = startTree(shape, tree.marker);
    tree.adopt(root);
    const pids = await pidsOf(shape);
    killTreeOf(root);
    await untilNoneRuns(pids, 2_000);

    // A marker this process never gave out (another Pi's, or a forged one) is not taken for a tree of ours.
    const foreign = startTree(shape, "0123456789abcdef.1");
    const others = await pidsOf(shape, 2);
    const strangers = others.filter((pid) => !pids.includes(pid) && pid !== foreign);
    killTreeOf(foreign);
    await untilNoneRuns([foreign], 2_000);
    expect(stillRunning(strangers)).toEqual(strangers);
  });
});
