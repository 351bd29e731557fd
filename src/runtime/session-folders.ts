/**
 * The lifecycle of the private session folders,
 * `<agent dir>/pi-mcp/sessions/<session id>/` (retained logs, Result Spills,
 * saved content).
 *
 * - A live session marks its folder with a lock of its own in `.live/`
 *   (proper-lockfile: a lock folder whose time the owner refreshes every
 *   30 s, named after the owner's process id). A crashed Pi stops
 *   refreshing and its process is gone: its lock is stale after 60 s and no
 *   longer protects the folder. A Pi that is only stopped or busy keeps it
 *   (its process still runs). Several Pi processes may use one session.
 * - Claiming a folder and removing one happen under the folder's own short
 *   lock (`.locks/<id>.lock`), so a sweep never removes a folder a session is
 *   claiming at that moment.
 * - The sweep removes, oldest use first, every folder no live session holds
 *   that is older than the retention age, or that the size cap no longer has
 *   room for, or whose Pi session no longer exists (a run without a saved
 *   session, or a session file that is gone): nothing can reach those files.
 *   It runs at most once a day, in the background, and stops when Pi quits.
 * - `session.json` in the folder records the Pi session file it belongs to.
 */
import { randomBytes } from "node:crypto";
import { existsSync, rmSync } from "node:fs";
import { chmod, lstat, mkdir, readdir, readFile, rm, rmdir, stat } from "node:fs/promises";
import { join } from "node:path";
import lockfile from "proper-lockfile";
import { STALE_LOCK_MS, writeAtomically } from "../config/atomic-file.ts";

const DAY_MS = 24 * 60 * 60 * 1000;

export interface RetentionPolicy {
  /** A folder not used for longer is removed. */
  readonly maxAgeMs: number;
  /** Above this total, the folders used longest ago are removed until the rest fits. */
  readonly maxBytes: number;
}

/** The README states these: 30 days and 1 GiB. */
export const RETENTION: RetentionPolicy = { maxAgeMs: 30 * DAY_MS, maxBytes: 1024 ** 3 };
/** A sweep runs at most this often (across every Pi process sharing the agent folder). */
export const SWEEP_INTERVAL_MS = DAY_MS;
/** A live session's lock not refreshed for this long belongs to a Pi that crashed. */
export const LIVE_STALE_MS = 60_000;

const OWNER_FILE = "session.json";
const LIVE_FOLDER = ".live";
const LOCKS_FOLDER = ".locks";
const STAMP_FILE = ".swept";
/** A claim waits this long at most for a sweep removing the same folder. */
const CLAIM_RETRIES = { retries: 20, factor: 1.3, minTimeout: 10, maxTimeout: 200 };

export function sessionsRoot(agentDir: string): string {
  return join(agentDir, "pi-mcp", "sessions");
}

/** A session folder held by this process. */
export interface SessionFolder {
  readonly path: string;
  /** The Pi session file the folder belongs to (none: a run without a saved session). */
  readonly sessionFile: string | undefined;
  /** Gives up this process's hold; with `remove`, also removes the folder unless another live session holds it. */
  release(remove: boolean): Promise<void>;
}

/** Runs `work` holding the short lock of one session folder (claims and removals exclude each other). */
async function withFolderLock<T>(root: string, id: string, retries: number | typeof CLAIM_RETRIES, work: () => Promise<T>): Promise<T> {
  await mkdir(join(root, LOCKS_FOLDER), { recursive: true, mode: 0o700 });
  const release = await lockfile.lock(join(root, id), {
    realpath: false,
    lockfilePath: join(root, LOCKS_FOLDER, `${id}.lock`),
    retries,
    stale: STALE_LOCK_MS,
    onCompromised: () => undefined,
  });
  try {
    return await work();
  } finally {
    await release().catch(() => undefined);
  }
}

/** Whether a live session (another one, or this process's) holds the folder. */
async function heldByLiveSession(folder: string): Promise<boolean> {
  const live = join(folder, LIVE_FOLDER);
  const names = await readdir(live).catch(() => [] as string[]);
  for (const name of names.filter((entry) => entry.endsWith(".lock"))) {
    if (await holdIsLive(live, name, false)) return true;
  }
  return false;
}

/** The locks crashed Pi processes left in a folder a session claims again. */
async function removeDeadHolds(folder: string): Promise<void> {
  const live = join(folder, LIVE_FOLDER);
  for (const name of await readdir(live).catch(() => [] as string[])) {
    if (!name.endsWith(".lock") || (await holdIsLive(live, name, true))) continue;
    await rmdir(join(live, name)).catch(() => undefined);
  }
}

/**
 * Whether the hold `<live>/<name>` (`<pid>-<random>.lock`) is a running
 * Pi's: its lock was refreshed within LIVE_STALE_MS, or its process still
 * runs. A Pi that is stopped (Ctrl+Z, SIGSTOP) or whose event loop is blocked
 * refreshes nothing, yet it is running and its session's files must stay;
 * only a Pi whose process is gone has crashed. `unsure`: the answer when the
 * lock cannot be read.
 */
async function holdIsLive(live: string, name: string, unsure: boolean): Promise<boolean> {
  if (processRuns(Number(/^(\d+)-/.exec(name)?.[1]))) return true;
  return lockfile.check(join(live, name.slice(0, -".lock".length)), { realpath: false, stale: LIVE_STALE_MS }).catch(() => unsure);
}

/** Whether a process with this id exists (signal 0 checks without touching it; EPERM: it exists, as another user's). */
function processRuns(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Claims `<root>/<id>` for a live session: creates it (0700), records the Pi
 * session file, and holds a live lock in it until `release`. Should the lock
 * be lost (a sweep removed a folder that looked abandoned, the machine slept
 * past the stale time while another Pi swept), it is taken again.
 */
export async function claimSessionFolder(root: string, id: string, sessionFile: string | undefined): Promise<SessionFolder> {
  const path = join(root, id);
  const owner = join(path, LIVE_FOLDER, `${process.pid}-${randomBytes(4).toString("hex")}`);
  let releaseLive: (() => Promise<void>) | undefined;
  let released = false;
  const hold = async (): Promise<void> => {
    await mkdir(join(path, LIVE_FOLDER), { recursive: true, mode: 0o700 });
    await chmod(path, 0o700); // a folder made by an older pi-mcp (or by hand) is narrowed too
    await removeDeadHolds(path);
    await writeAtomically(
      join(path, OWNER_FILE),
      `${JSON.stringify({ version: 1, ...(sessionFile !== undefined && { sessionFile }) })}\n`,
      0o600,
    );
    releaseLive = await lockfile.lock(owner, {
      realpath: false,
      stale: LIVE_STALE_MS,
      onCompromised: () => {
        releaseLive = undefined;
        if (!released) void withFolderLock(root, id, CLAIM_RETRIES, hold).catch(() => undefined);
      },
    });
  };
  await mkdir(root, { recursive: true, mode: 0o700 });
  await withFolderLock(root, id, CLAIM_RETRIES, hold);
  return {
    path,
    sessionFile,
    async release(remove) {
      released = true;
      await releaseLive?.().catch(() => undefined);
      releaseLive = undefined;
      if (remove) await removeUnlessLive(root, id).catch(() => undefined);
    },
  };
}

/** Removes a session folder unless a live session holds it; false when it was kept (or busy). */
async function removeUnlessLive(root: string, id: string): Promise<boolean> {
  return withFolderLock(root, id, 0, async () => {
    const folder = join(root, id);
    if (await heldByLiveSession(folder)) return false;
    await rm(folder, { recursive: true, force: true });
    return true;
  }).catch(() => false);
}

interface FolderReport {
  readonly id: string;
  /** Epoch ms of the newest change in the folder (a live session's lock refresh counts). */
  readonly lastUsed: number;
  readonly bytes: number;
  readonly live: boolean;
  /** Its Pi session is gone or was never saved: nothing can reach its files any more. */
  readonly unreachable: boolean;
}

/** Whether the Pi session the folder records is gone: none was saved, or its file no longer exists. */
async function sessionGone(folder: string): Promise<boolean> {
  let owner: { sessionFile?: unknown };
  try {
    owner = JSON.parse(await readFile(join(folder, OWNER_FILE), "utf8")) as { sessionFile?: unknown };
  } catch {
    return false; // not recorded (a folder of an older pi-mcp): age and size decide
  }
  if (typeof owner.sessionFile !== "string") return true;
  return lstat(owner.sessionFile).then(
    () => false,
    (error: NodeJS.ErrnoException) => error.code === "ENOENT",
  );
}

async function inspect(root: string, id: string): Promise<FolderReport> {
  const folder = join(root, id);
  let lastUsed = (await stat(folder)).mtimeMs;
  let bytes = 0;
  for (const entry of await readdir(folder, { recursive: true, withFileTypes: true })) {
    const info = await lstat(join(entry.parentPath, entry.name)).catch(() => undefined);
    if (!info) continue;
    lastUsed = Math.max(lastUsed, info.mtimeMs);
    if (info.isFile()) bytes += info.size;
  }
  return { id, lastUsed, bytes, live: await heldByLiveSession(folder), unreachable: await sessionGone(folder) };
}

export interface SweepReport {
  readonly removed: readonly string[];
  readonly kept: number;
  /** The bytes of the folders that were kept. */
  readonly keptBytes: number;
}

/**
 * Removes the session folders `policy` no longer keeps, never one a live
 * session holds: first, as it reads them, those unused for longer than the
 * retention age and the unreachable ones (so even a sweep cut short makes
 * progress); then, oldest use first, as many as the size cap needs. Stops
 * between two folders when `signal` is aborted.
 */
export async function sweepSessionFolders(root: string, policy: RetentionPolicy = RETENTION, signal?: AbortSignal): Promise<SweepReport> {
  const entries = await readdir(root, { withFileTypes: true }).catch(() => []);
  const oldest = Date.now() - policy.maxAgeMs;
  const removed: string[] = [];
  const kept: FolderReport[] = [];
  for (const entry of entries) {
    if (signal?.aborted) break;
    if (!entry.isDirectory() || entry.name.startsWith(".")) continue;
    const folder = await inspect(root, entry.name).catch(() => undefined);
    if (!folder) continue;
    if (!folder.live && (folder.unreachable || folder.lastUsed < oldest) && (await removeUnlessLive(root, folder.id)))
      removed.push(folder.id);
    else kept.push(folder);
  }
  kept.sort((a, b) => a.lastUsed - b.lastUsed);
  let total = kept.reduce((sum, folder) => sum + folder.bytes, 0);
  let overCap = 0;
  for (const folder of kept) {
    if (signal?.aborted || total <= policy.maxBytes) break;
    if (folder.live || !(await removeUnlessLive(root, folder.id))) continue;
    removed.push(folder.id);
    total -= folder.bytes;
    overCap++;
  }
  await removeAbandonedLocks(root);
  return { removed, kept: kept.length - overCap, keptBytes: total };
}

/** Folder locks of a process killed while it held one, for folders that are gone. */
async function removeAbandonedLocks(root: string): Promise<void> {
  const locks = join(root, LOCKS_FOLDER);
  for (const name of await readdir(locks).catch(() => [] as string[])) {
    const id = name.slice(0, -".lock".length);
    const info = await stat(join(locks, name)).catch(() => undefined);
    if (!info || info.mtimeMs > Date.now() - STALE_LOCK_MS) continue;
    if (
      await stat(join(root, id)).then(
        () => true,
        () => false,
      )
    )
      continue;
    await rmdir(join(locks, name)).catch(() => undefined);
  }
}

/**
 * Sweeps when the last sweep of any Pi process (`.swept`) is a day old or
 * more; one process sweeps at a time. Resolves with the report, or undefined
 * when no sweep was due (or another process is sweeping). A sweep stopped by
 * `signal` is not recorded, so the next start continues it.
 */
export async function sweepWhenDue(
  root: string,
  signal?: AbortSignal,
  policy: RetentionPolicy = RETENTION,
): Promise<SweepReport | undefined> {
  const stamp = join(root, STAMP_FILE);
  const due = async () =>
    (await stat(stamp).then(
      (info) => info.mtimeMs,
      () => 0,
    )) <=
    Date.now() - SWEEP_INTERVAL_MS;
  if (!(await due())) return undefined;
  await mkdir(root, { recursive: true, mode: 0o700 });
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(stamp, { realpath: false, stale: STALE_LOCK_MS, onCompromised: () => undefined });
  } catch {
    return undefined; // another Pi is sweeping
  }
  try {
    if (!(await due())) return undefined;
    const report = await sweepSessionFolders(root, policy, signal);
    if (!signal?.aborted)
      await writeAtomically(
        stamp,
        `${JSON.stringify({ version: 1, sweptAt: new Date().toISOString(), removed: report.removed.length })}\n`,
        0o600,
      );
    return report;
  } finally {
    await release().catch(() => undefined);
  }
}

/** Whether nothing can reach a folder's files once its session ended: it has no saved Pi session file. */
function unreachableAtEnd(folder: SessionFolder): boolean {
  return folder.sessionFile === undefined || !existsSync(folder.sessionFile);
}

/**
 * The session folders of this Pi process, across the extension's re-imports
 * (`/reload`, `/new`, `/resume` and `/fork` run its factory again; this lives
 * on `globalThis`), and its background sweep.
 */
export class ProcessSessionFolders {
  private readonly held = new Set<SessionFolder>();
  private sweep: AbortController | undefined;
  private exitHook = false;

  /** Claims the folder of session `id`; should claiming fail, the folder is still made (0700), unprotected. */
  async claim(agentDir: string, id: string, sessionFile: string | undefined): Promise<SessionFolder> {
    const root = sessionsRoot(agentDir);
    const folder = await claimSessionFolder(root, id, sessionFile).catch(async (): Promise<SessionFolder> => {
      const path = join(root, id);
      await mkdir(path, { recursive: true, mode: 0o700 });
      return { path, sessionFile, release: async (remove) => void (remove && (await rm(path, { recursive: true, force: true }))) };
    });
    this.held.add(folder);
    if (unreachableAtEnd(folder)) this.removeAtExit();
    return folder;
  }

  /**
   * A session ended. When Pi quits, every folder this process holds is let go
   * and the unreachable ones are removed. A replaced session's folder is let
   * go at once when its Pi session was saved; otherwise it stays until the
   * run ends (a forked conversation may still name its files).
   */
  async ended(folder: SessionFolder | undefined, quit: boolean): Promise<void> {
    if (quit) {
      this.sweep?.abort();
      this.sweep = undefined;
      const all = [...this.held];
      this.held.clear();
      await Promise.all(all.map((each) => each.release(unreachableAtEnd(each))));
      return;
    }
    if (!folder || unreachableAtEnd(folder)) return;
    this.held.delete(folder);
    await folder.release(false);
  }

  /** Starts the daily sweep in the background unless this process runs one; it never delays anything. */
  sweepWhenDue(agentDir: string): void {
    if (this.sweep) return;
    const controller = new AbortController();
    this.sweep = controller;
    void sweepWhenDue(sessionsRoot(agentDir), controller.signal)
      .catch(() => undefined)
      .finally(() => {
        if (this.sweep === controller) this.sweep = undefined;
      });
  }

  /** A run that ends without Pi's quit (process.exit) still removes its unreachable folders. */
  private removeAtExit(): void {
    if (this.exitHook) return;
    this.exitHook = true;
    process.once("exit", () => {
      for (const folder of this.held) if (unreachableAtEnd(folder)) rmSync(folder.path, { recursive: true, force: true });
    });
  }
}

const FOLDERS = Symbol.for("pi-mcp.session-folders");

/** The process-wide session folders (one per Pi process, shared by every re-import of the extension). */
export function processSessionFolders(): ProcessSessionFolders {
  const global = globalThis as { [FOLDERS]?: ProcessSessionFolders };
  global[FOLDERS] ??= new ProcessSessionFolders();
  return global[FOLDERS];
}
