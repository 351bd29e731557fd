// The private session folders (`<agent dir>/pi-mcp/sessions/<id>/`) through a real Pi:
// a run without a saved session removes its folder when it ends, a saved session keeps
// it (and its spill paths), and the daily sweep at start removes old, oversized and
// unreachable folders in the background, but never the folder of a Pi that is running,
// and a SIGKILLed Pi's folder only once its lock is stale.
import { existsSync } from "node:fs";
import { mkdir, open, readFile, readdir, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LIVE_STALE_MS, SWEEP_INTERVAL_MS } from "../../src/runtime/session-folders.ts";
import { fixturePath, nodePath } from "../helpers/servers.ts";
import { eventually } from "../helpers/wait.ts";
import { PI_VERSIONS, REPO_ROOT, killProcessTree, runPi, startPiRpc, usePiHome, type FauxLogEntry, type PiRpc } from "./harness/pi.ts";

const home = usePiHome();
const DAY = 24 * 60 * 60 * 1000;
const sessions = () => join(home.agentDir, "pi-mcp", "sessions");
/** The session folders (not the sweep's stamp and locks). */
const folders = async () => (await readdir(sessions()).catch(() => [] as string[])).filter((name) => !name.startsWith(".")).sort();

const servers = { mcp: { servers: { big: { command: nodePath(), args: [fixturePath("big-output")] } } } };
/** The model calls `big` for 200 KB (more than Pi's 50 KB: the rest goes to a Result Spill), then says it is done. */
const SPILL_SCRIPT = [{ toolCall: { name: "mcp__big__big", arguments: { bytes: 200_000 } } }, { text: "done" }];

/** The spill path the model was given (in the tool result of its last request). */
function spillPath(requests: FauxLogEntry[]): string {
  const result = requests.at(-1)!.messages.findLast((message) => message.role === "toolResult");
  const text = result.content.map((part: { text?: string }) => part.text ?? "").join("\n");
  const path = /(\/\S+\/spill\/\S+?\.txt)/.exec(text)?.[1];
  if (!path) throw new Error(`no spill path in the tool result: ${text.slice(-500)}`);
  return path;
}

describe.each(PI_VERSIONS)("Pi %s", (version) => {
  it("a run with --no-session removes its folder when it ends; a saved session keeps it, naming its session file", async () => {
    await home.writeSettings(servers);
    const ephemeral = await runPi({
      version,
      home: home.home,
      cwd: home.cwd,
      extensions: [REPO_ROOT],
      args: ["-p", "/mcp wait", "go"],
      script: SPILL_SCRIPT,
      timeoutMs: 60_000,
    });
    expect(ephemeral.code, ephemeral.stderr).toBe(0);
    const spilled = spillPath(ephemeral.requests);
    expect(spilled.startsWith(sessions())).toBe(true);
    expect(existsSync(spilled)).toBe(false);
    expect(await folders()).toEqual([]);

    const saved = await runPi({
      version,
      home: home.home,
      cwd: home.cwd,
      extensions: [REPO_ROOT],
      args: ["-p", "/mcp wait", "go"],
      script: SPILL_SCRIPT,
      noSession: false,
      timeoutMs: 60_000,
    });
    expect(saved.code, saved.stderr).toBe(0);
    const [id] = await folders();
    expect(id).toBeDefined();
    const kept = spillPath(saved.requests);
    expect(kept.startsWith(join(sessions(), id!))).toBe(true);
    expect((await readFile(kept, "utf8")).length).toBe(200_000); // the spill path the model got still works
    const record = JSON.parse(await readFile(join(sessions(), id!, "session.json"), "utf8")) as { sessionFile: string };
    expect(existsSync(record.sessionFile)).toBe(true);
    expect(record.sessionFile).toContain(id);
  }, 120_000);
});

it("pi -p with only a command (no message, so Pi writes no session file) removes its folder too", async () => {
  await home.writeSettings(servers);
  const result = await runPi({
    home: home.home,
    cwd: home.cwd,
    extensions: [REPO_ROOT],
    args: ["-p", "/mcp wait"],
    noSession: false,
    timeoutMs: 60_000,
  });
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout).toContain("big");
  expect(await folders()).toEqual([]);
}, 60_000);

it("a spill path given to the model in a run without a saved session is valid until that run ends", async () => {
  await home.writeSettings(servers);
  const rpc = await startPiRpc({ home: home.home, cwd: home.cwd, extensions: [REPO_ROOT], script: SPILL_SCRIPT });
  let path: string;
  try {
    await rpc.prompt("/mcp wait");
    await rpc.prompt("go");
    path = spillPath(rpc.requests());
    expect((await readFile(path, "utf8")).length).toBe(200_000);
  } finally {
    await rpc.close();
  }
  expect(existsSync(path)).toBe(false);
  expect(await folders()).toEqual([]);
}, 60_000);

/** A folder as a finished saved session leaves it, last used `daysAgo` days ago, with `bytes` of spill (sparse: no real disk use). */
async function seed(id: string, daysAgo: number, options: { bytes?: number; saved?: boolean } = {}): Promise<void> {
  const path = join(sessions(), id);
  await mkdir(join(path, "spill"), { recursive: true });
  const sessionFile = join(home.home, `${id}.jsonl`);
  await writeFile(sessionFile, "{}\n");
  await writeFile(join(path, "session.json"), JSON.stringify(options.saved === false ? { version: 1 } : { version: 1, sessionFile }));
  const spill = await open(join(path, "spill", "out.txt"), "w");
  await spill.truncate(options.bytes ?? 1000);
  await spill.close();
  const then = new Date(Date.now() - daysAgo * DAY);
  for (const entry of [join(path, "spill", "out.txt"), join(path, "spill"), join(path, "session.json"), path])
    await utimes(entry, then, then);
}

/** Starts a Pi (RPC mode) and waits until its start-up sweep has finished (it writes `.swept`). */
async function piThatSwept(options: { noSession?: boolean } = {}): Promise<PiRpc> {
  const stamp = join(sessions(), ".swept");
  const before = await readFile(stamp, "utf8").catch(() => undefined);
  const rpc = await startPiRpc({ home: home.home, cwd: home.cwd, extensions: [REPO_ROOT], noSession: options.noSession ?? true });
  await eventually(
    async () => (await readFile(stamp, "utf8").catch(() => undefined)) !== before,
    30_000,
    () => `no sweep finished\n${rpc.stderr()}`,
  );
  return rpc;
}

/** Makes the last sweep look a day old, so the next Pi start sweeps again. */
async function sweepDueAgain(): Promise<void> {
  const then = new Date(Date.now() - SWEEP_INTERVAL_MS - 60_000);
  await utimes(join(sessions(), ".swept"), then, then);
}

it("a Pi start sweeps in the background: old, over-the-cap and unreachable folders go, oldest first; recent ones and a running Pi's folder stay; a SIGKILLed Pi's folder goes once its lock is stale", async () => {
  await home.writeSettings(servers);
  // A running Pi without a saved session: its folder would be unreachable (removable) if it were not live.
  const running = await piThatSwept(); // its own start-up sweep had nothing to do
  try {
    await running.prompt("/mcp wait");
    const runningFolder = (await folders())[0]!;
    expect(await folders()).toEqual([runningFolder]);
    await sweepDueAgain();

    await seed("old-40-days", 40);
    await seed("old-31-days", 31);
    await seed("big-5-days", 5, { bytes: 700 * 1024 * 1024 });
    await seed("big-3-days", 3, { bytes: 600 * 1024 * 1024 });
    await seed("small-2-days", 2);
    await seed("unsaved-1-day", 1, { saved: false });
    await seed("fresh", 0);

    const sweeper = await piThatSwept();
    await sweeper.close();
    // 1.3 GiB of spills is over the 1 GiB cap: the older big folder goes, the newer one fits.
    expect(await folders()).toEqual(["big-3-days", "fresh", runningFolder, "small-2-days"].sort());

    // The running Pi crashes: its lock is no longer refreshed.
    killProcessTree(running.child.pid!);
    await running.close();
    await sweepDueAgain();
    const tooSoon = await piThatSwept();
    await tooSoon.close();
    expect(await folders()).toContain(runningFolder); // within a minute it could still be a slow, live Pi

    const live = join(sessions(), runningFolder, ".live");
    const then = new Date(Date.now() - LIVE_STALE_MS - 1_000);
    for (const lock of await readdir(live)) await utimes(join(live, lock), then, then);
    await sweepDueAgain();
    const later = await piThatSwept();
    await later.close();
    expect(await folders()).toEqual(["big-3-days", "fresh", "small-2-days"]);
  } finally {
    await running.close();
  }
}, 120_000);
