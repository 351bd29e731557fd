// The watchdog of src/safety/tree-guard.ts, in a real process that imports
// the guard: a process that exits with no tree left ends its watchdog as it
// exits (nothing of pi-mcp's outlives it, which test/e2e/real-servers.test.ts
// checks of `pi-mcp test`), and one that exits with a tree still running
// leaves the watchdog to end that tree.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { running, untilNoneRuns } from "../helpers/trees.ts";
import { nodeBinary, REPO_ROOT } from "../helpers/tmp.ts";
import { WATCHDOG_GRACE_MS } from "../../src/safety/tree-guard.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "pi-mcp-tree-guard-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/**
 * A process that guards one tree (a real `sleep` carrying the tree's marker), waits for its watchdog,
 * prints `<watchdog pid> <sleep pid>`, releases the tree (and ends the sleep) when asked, then exits.
 */
const SCRIPT = String.raw`
import { spawn } from "node:child_process";
import { guardTree, nextMarker, TREE_VARIABLE } from ${JSON.stringify(join(REPO_ROOT, "src/safety/tree-guard.ts"))};
const GUARD = Symbol.for("pi-mcp.process-tree-guard");
const sleeper = spawn("sleep", ["60"], { stdio: "ignore", env: { ...process.env, [TREE_VARIABLE]: nextMarker() } });
const release = guardTree({ signalNow() {} }); // the watchdog alone ends the tree
const started = setInterval(() => {
  const pid = globalThis[GUARD].watchdogPid;
  if (pid === undefined) return;
  clearInterval(started);
  process.stdout.write(pid + " " + sleeper.pid + "\n");
}, 5);
if (process.argv[2] === "released") {
  sleeper.once("exit", () => {
    release();
    process.exit(0);
  });
  process.stdin.once("data", () => sleeper.kill("SIGKILL"));
} else process.stdin.once("data", () => process.exit(0));
`;

/** Runs the script; resolves with the two pids once it has exited (after one line on its stdin). */
async function runGuarded(mode: "released" | "left"): Promise<{ watchdog: number; sleeper: number; watchdogAtExit: boolean }> {
  const script = join(dir, "guarded.mts");
  await writeFile(script, SCRIPT);
  const child = spawn(nodeBinary(), ["--experimental-transform-types", "--no-warnings", script, mode], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const pids = await new Promise<[number, number]>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`exited early (${code})`)));
    child.stdout.setEncoding("utf8").once("data", (line: string) => resolve(line.trim().split(" ").map(Number) as [number, number]));
  });
  await new Promise<void>((resolve) => {
    child.removeAllListeners("exit");
    child.once("exit", () => resolve());
    child.stdin.end("go\n");
  });
  return { watchdog: pids[0], sleeper: pids[1], watchdogAtExit: running(pids[0]) && !killPending(pids[0]) };
}

/** Whether SIGKILL is pending for `pid` (sent, not yet acted on). */
function killPending(pid: number): boolean {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "latin1");
    const masks = [...status.matchAll(/^(?:SigPnd|ShdPnd):\s*([0-9a-f]+)$/gm)].map((match) => BigInt(`0x${match[1]}`));
    return masks.some((mask) => (mask & 0x100n) !== 0n);
  } catch {
    return false;
  }
}

it("a process that exits with no tree left has ended its watchdog by the time it is gone", async () => {
  const { watchdog, sleeper, watchdogAtExit } = await runGuarded("released");
  expect(running(sleeper)).toBe(false);
  expect(watchdogAtExit, "the watchdog still ran, with no kill pending, once its process had exited").toBe(false);
  await untilNoneRuns([watchdog], 5_000);
});

it("a process that exits with a tree still running leaves the watchdog to end it", async () => {
  const { watchdog, sleeper } = await runGuarded("left");
  // The watchdog signals the tree (SIGTERM ends a sleep), then ends itself.
  await untilNoneRuns([sleeper], WATCHDOG_GRACE_MS + 5_000);
  await untilNoneRuns([watchdog], WATCHDOG_GRACE_MS + 5_000);
});
