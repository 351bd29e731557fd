// The lifecycle of the private session folders on real files, with real processes
// holding them: the retention sweep (age, size cap, unreachable sessions), the live
// lock a running session holds (and a SIGKILLed one loses), at most one sweep a day.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, watch } from "node:fs";
import { mkdir, readFile, readdir, stat, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import lockfile from "proper-lockfile";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  LIVE_STALE_MS,
  ProcessSessionFolders,
  RETENTION,
  SWEEP_INTERVAL_MS,
  claimSessionFolder,
  sessionsRoot,
  sweepSessionFolders,
  sweepWhenDue,
} from "../../src/runtime/session-folders.ts";
import { REPO_ROOT, createSandbox, nodeBinary, type Sandbox } from "../helpers/tmp.ts";

const DAY = 24 * 60 * 60 * 1000;
let sandbox: Sandbox;
let root: string;
let sessionFile: string;
const children: ChildProcess[] = [];
beforeEach(async () => {
  sandbox = await createSandbox();
  root = sessionsRoot(sandbox.agentDir);
  sessionFile = join(sandbox.root, "pi-session.jsonl"); // a saved Pi session that still exists
  await writeFile(sessionFile, "{}\n");
});
afterEach(async () => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  await sandbox.cleanup();
});

/** A session folder as a finished session leaves it: its record, a log and a spill of `bytes`. */
async function folder(id: string, options: { bytes?: number; daysAgo?: number; record?: object | null } = {}): Promise<string> {
  const path = join(root, id);
  await mkdir(join(path, "logs"), { recursive: true });
  await mkdir(join(path, "spill"), { recursive: true });
  if (options.record !== null) await writeFile(join(path, "session.json"), JSON.stringify(options.record ?? { version: 1, sessionFile }));
  await writeFile(join(path, "logs", "server.log"), "log\n");
  await writeFile(join(path, "spill", "out.txt"), Buffer.alloc(options.bytes ?? 1000, 0x61));
  if (options.daysAgo) await age(path, options.daysAgo * DAY);
  return path;
}

/** Makes every entry below `path` (and `path` itself) look `ms` older, as if unused since. */
async function age(path: string, ms: number, skip: (name: string) => boolean = () => false): Promise<void> {
  const then = new Date(Date.now() - ms);
  for (const entry of await readdir(path, { recursive: true, withFileTypes: true })) {
    const full = join(entry.parentPath, entry.name);
    if (!skip(full)) await utimes(full, then, then);
  }
  await utimes(path, then, then);
}

const present = async () => (await readdir(root)).filter((name) => !name.startsWith(".")).sort();

describe("the sweep", () => {
  it(`removes folders unused for longer than ${RETENTION.maxAgeMs / DAY} days and keeps newer ones`, async () => {
    await folder("old", { daysAgo: 31 });
    await folder("recent", { daysAgo: 29 });
    await folder("fresh");
    const report = await sweepSessionFolders(root);
    expect(report.removed).toEqual(["old"]);
    expect(await present()).toEqual(["fresh", "recent"]);
  });

  it("removes the folders used longest ago until the rest fits the size cap", async () => {
    const MB = 1024 * 1024;
    await folder("first", { bytes: MB, daysAgo: 4 });
    await folder("second", { bytes: MB, daysAgo: 3 });
    await folder("third", { bytes: MB, daysAgo: 2 });
    await folder("fourth", { bytes: MB, daysAgo: 1 });
    const report = await sweepSessionFolders(root, { maxAgeMs: RETENTION.maxAgeMs, maxBytes: 2.5 * MB });
    expect(report.removed).toEqual(["first", "second"]);
    expect(await present()).toEqual(["fourth", "third"]);
    expect(report.keptBytes).toBeLessThanOrEqual(2.5 * MB);
  });

  it("removes at once a folder whose Pi session is gone (never saved, or its file deleted); keeps one recorded by an older pi-mcp", async () => {
    await folder("unsaved", { record: { version: 1 } });
    await folder("deleted", { record: { version: 1, sessionFile: join(sandbox.root, "gone.jsonl") } });
    await folder("saved");
    await folder("unrecorded", { record: null });
    expect([...(await sweepSessionFolders(root)).removed].sort()).toEqual(["deleted", "unsaved"]);
    expect(await present()).toEqual(["saved", "unrecorded"]);
  });

  it("skips a folder another process is claiming or removing at that moment (its folder lock), and removes it later", async () => {
    await folder("busy", { daysAgo: 40 });
    await mkdir(join(root, ".locks"), { recursive: true });
    const release = await lockfile.lock(join(root, "busy"), { realpath: false, lockfilePath: join(root, ".locks", "busy.lock") });
    expect((await sweepSessionFolders(root)).removed).toEqual([]);
    expect(await present()).toEqual(["busy"]);
    await release();
    expect((await sweepSessionFolders(root)).removed).toEqual(["busy"]);
  });

  it("removes a dead process's folder lock once its folder is gone and the lock is stale", async () => {
    await mkdir(join(root, ".locks", "ghost.lock"), { recursive: true });
    await mkdir(join(root, ".locks", "young.lock"), { recursive: true });
    const then = new Date(Date.now() - 60_000);
    await utimes(join(root, ".locks", "ghost.lock"), then, then);
    await sweepSessionFolders(root);
    expect(await readdir(join(root, ".locks"))).toEqual(["young.lock"]);
  });
});

/** A child Node that claims session folder `id` and keeps it until killed. */
async function holder(id: string, file: string | undefined): Promise<ChildProcess> {
  const script = join(sandbox.root, "holder.mjs");
  await writeFile(
    script,
    `const { claimSessionFolder } = await import(${JSON.stringify(pathToFileURL(join(REPO_ROOT, "src/runtime/session-folders.ts")).href)});
     await claimSessionFolder(process.argv[2], process.argv[3], process.argv[4] || undefined);
     process.stdout.write("claimed\\n");
     setInterval(() => {}, 1000);`,
  );
  const child = spawn(nodeBinary(), ["--experimental-transform-types", "--no-warnings", script, root, id, file ?? ""], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => chunk.includes("claimed") && resolve());
    child.on("exit", () => reject(new Error(`the holder exited: ${stderr}`)));
  });
  return child;
}

/** The id of a process that ran and has exited (what a crashed Pi's lock names). */
async function exitedPid(): Promise<number> {
  const child = spawn(nodeBinary(), ["-e", ""], { stdio: "ignore" });
  await new Promise((resolve) => child.once("exit", resolve));
  return child.pid!;
}

describe("a live session's folder", () => {
  it("is kept while its Pi is stopped (SIGSTOP, Ctrl+Z) and its lock has gone stale: the process still runs", async () => {
    const child = await holder("stopped", undefined); // a run without a saved session: unreachable once it ends
    const path = join(root, "stopped");
    await writeFile(join(path, "spill.txt"), "a spill the model was given");
    child.kill("SIGSTOP");
    try {
      // Stopped for longer than the stale time: nobody refreshed its lock.
      const then = new Date(Date.now() - LIVE_STALE_MS - 1_000);
      for (const name of await readdir(join(path, ".live"))) await utimes(join(path, ".live", name), then, then);
      expect((await sweepSessionFolders(root, { maxAgeMs: DAY, maxBytes: 1 })).removed).toEqual([]);
      expect(await readFile(join(path, "spill.txt"), "utf8")).toBe("a spill the model was given");
      // Another Pi claiming the same session keeps the stopped one's hold.
      const other = await claimSessionFolder(root, "stopped", undefined);
      expect(await readdir(join(path, ".live"))).toHaveLength(2);
      await other.release(true);
      expect(await present()).toEqual(["stopped"]);
    } finally {
      child.kill("SIGCONT");
    }
  }, 30_000);

  it("is never removed while a running process holds it, however old, unreachable or over the cap; after that process is SIGKILLed, it goes once its lock is stale", async () => {
    const child = await holder("live", undefined); // a run without a saved session: unreachable once it ends
    const path = join(root, "live");
    await writeFile(join(path, "spill.txt"), Buffer.alloc(4096, 0x61));
    await age(path, 90 * DAY, (entry) => entry.includes(".live")); // its content untouched for 90 days; its live lock is refreshed
    const tight = { maxAgeMs: DAY, maxBytes: 1 };
    expect((await sweepSessionFolders(root, tight)).removed).toEqual([]);
    expect(await present()).toEqual(["live"]);

    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("exit", resolve));
    // Just killed: its lock still looks live for up to a minute (a Pi that is only slow keeps its folder).
    expect((await sweepSessionFolders(root, tight)).removed).toEqual([]);
    // A minute later nobody has refreshed it: the folder is abandoned.
    const locks = (await readdir(join(path, ".live"))).map((name) => join(path, ".live", name));
    const then = new Date(Date.now() - LIVE_STALE_MS - 1_000);
    for (const lock of locks) await utimes(lock, then, then);
    expect((await sweepSessionFolders(root)).removed).toEqual(["live"]);
  }, 30_000);

  it("is held by each of several processes using the same session: it stays until the last one lets go", async () => {
    const one = await claimSessionFolder(root, "shared", sessionFile);
    const two = await claimSessionFolder(root, "shared", sessionFile);
    await one.release(true); // the other still holds it
    expect(await present()).toEqual(["shared"]);
    await two.release(true);
    expect(await present()).toEqual([]);
  });

  it("is narrowed to 0700, records its Pi session file, and a new claim clears the locks crashed holders left", async () => {
    const path = join(root, "mine");
    const crashed = `${await exitedPid()}-deadbeef.lock`;
    await mkdir(join(path, ".live", crashed), { recursive: true, mode: 0o755 });
    const then = new Date(Date.now() - LIVE_STALE_MS - 1_000);
    await utimes(join(path, ".live", crashed), then, then);
    const claim = await claimSessionFolder(root, "mine", sessionFile);
    expect((await stat(path)).mode & 0o777).toBe(0o700);
    expect(JSON.parse(await readFile(join(path, "session.json"), "utf8"))).toEqual({ version: 1, sessionFile });
    const holds = await readdir(join(path, ".live"));
    expect(holds).toHaveLength(1);
    expect(holds[0]).toMatch(new RegExp(`^${process.pid}-[0-9a-f]{8}\\.lock$`));
    await claim.release(false);
    expect(await readdir(join(path, ".live"))).toEqual([]);
  });
});

describe("sweeping when due", () => {
  it(`sweeps at most once in ${SWEEP_INTERVAL_MS / 3_600_000} hours, and again once that has passed`, async () => {
    await folder("old", { daysAgo: 40 });
    expect((await sweepWhenDue(root))?.removed).toEqual(["old"]);
    await folder("older", { daysAgo: 50 });
    expect(await sweepWhenDue(root)).toBeUndefined();
    expect(await present()).toEqual(["older"]);
    const then = new Date(Date.now() - SWEEP_INTERVAL_MS - 60_000);
    await utimes(join(root, ".swept"), then, then);
    expect((await sweepWhenDue(root))?.removed).toEqual(["older"]);
  });

  it("runs in one of two processes starting at once", async () => {
    for (let i = 0; i < 50; i++) await folder(`old-${i}`, { daysAgo: 40 });
    const script = join(sandbox.root, "sweeper.mjs");
    await writeFile(
      script,
      `const { sweepWhenDue } = await import(${JSON.stringify(pathToFileURL(join(REPO_ROOT, "src/runtime/session-folders.ts")).href)});
       process.stdin.once("data", async () => {
         const report = await sweepWhenDue(process.argv[2]);
         process.stdout.write(JSON.stringify(report === undefined ? null : report.removed.length) + "\\n");
       });
       process.stdout.write("ready\\n");`,
    );
    const run = () => {
      const child = spawn(nodeBinary(), ["--experimental-transform-types", "--no-warnings", script, root], {
        stdio: ["pipe", "pipe", "inherit"],
      });
      children.push(child);
      let out = "";
      const ready = new Promise<void>((resolve) =>
        child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
          out += chunk;
          if (out.includes("ready")) resolve();
        }),
      );
      const done = new Promise<unknown>((resolve) => child.on("exit", () => resolve(JSON.parse(out.split("\n")[1]!))));
      return { child, ready, done };
    };
    const sweepers = [run(), run()];
    await Promise.all(sweepers.map((sweeper) => sweeper.ready));
    for (const sweeper of sweepers) sweeper.child.stdin!.end("go\n");
    const results = await Promise.all(sweepers.map((sweeper) => sweeper.done));
    expect(results.filter((result) => result !== null)).toEqual([50]);
    expect(await present()).toEqual([]);
  }, 30_000);

  it("a sweep stopped part-way (Pi quit) keeps what it removed and is not recorded: the next start continues it", async () => {
    for (let i = 0; i < 20; i++) await folder(`old-${i}`, { daysAgo: 40 });
    const quit = new AbortController();
    // Pi quits as soon as the first folder is gone.
    const watcher = watch(root, (_event, name) => name?.startsWith("old-") && !existsSync(join(root, name)) && quit.abort());
    const first = await sweepWhenDue(root, quit.signal);
    watcher.close();
    expect(first!.removed.length).toBeGreaterThanOrEqual(1);
    expect(first!.removed.length).toBeLessThan(20);
    expect(await present()).toHaveLength(20 - first!.removed.length);
    const second = await sweepWhenDue(root);
    expect(second!.removed.length).toBe(20 - first!.removed.length);
    expect(await present()).toEqual([]);
  });
});

describe("a Pi process's session folders", () => {
  it("a process that exits without Pi's quit (process.exit) still removes its folders without a saved session", async () => {
    const script = join(sandbox.root, "exiter.mjs");
    await writeFile(
      script,
      `const { ProcessSessionFolders } = await import(${JSON.stringify(pathToFileURL(join(REPO_ROOT, "src/runtime/session-folders.ts")).href)});
       const folders = new ProcessSessionFolders();
       await folders.claim(process.argv[2], "unsaved", undefined);
       await folders.claim(process.argv[2], "saved", process.argv[3]);
       process.exit(0);`,
    );
    const child = spawn(nodeBinary(), ["--experimental-transform-types", "--no-warnings", script, sandbox.agentDir, sessionFile], {
      stdio: "inherit",
    });
    expect(await new Promise((resolve) => child.on("exit", resolve))).toBe(0);
    expect(await present()).toEqual(["saved"]);
  });

  it("when Pi quits: the folders without a saved session are removed, saved ones are kept and let go", async () => {
    const folders = new ProcessSessionFolders();
    await folders.claim(sandbox.agentDir, "unsaved", undefined);
    await folders.claim(sandbox.agentDir, "not-written", join(sandbox.root, "never-written.jsonl")); // a Pi session file not written yet
    const saved = await folders.claim(sandbox.agentDir, "saved", sessionFile);
    await folders.ended(saved, true);
    expect(await present()).toEqual(["saved"]);
    expect(await readdir(join(saved.path, ".live"))).toEqual([]);
  });

  it("a replaced session: a saved one is let go at once, an unsaved one stays held until Pi quits (a fork may name its files)", async () => {
    const folders = new ProcessSessionFolders();
    const saved = await folders.claim(sandbox.agentDir, "saved", sessionFile);
    const unsaved = await folders.claim(sandbox.agentDir, "unsaved", undefined);
    await folders.ended(saved, false);
    await folders.ended(unsaved, false);
    expect(await readdir(join(saved.path, ".live"))).toEqual([]);
    expect(await readdir(join(unsaved.path, ".live"))).toHaveLength(1);
    expect((await sweepSessionFolders(root)).removed).toEqual([]); // held: not even the sweep takes it
    await folders.ended(undefined, true);
    expect(await present()).toEqual(["saved"]);
  });
});
