/**
 * The one writer of every file pi-mcp replaces: settings, the credential store,
 * retained logs, spills and saved content, the import-notice state.
 *
 * A write goes to a temporary file beside the file it replaces
 * (`.<name>.<pid>.<random>.tmp`), is flushed, and is renamed over it, so a
 * reader sees the old bytes or the new ones, never half of them. The
 * temporary file is removed on every failure (open, write, flush, close,
 * rename): a full disk leaves nothing behind. A writer killed mid-write leaves
 * its temporary file; the next writer holding the file's lock removes those
 * older than the lock's stale time.
 *
 * Symbolic links: a writer that follows them (settings) writes through the
 * link, beside its final target, and locks the target as well as the link (the
 * link's lock is the one Pi's SettingsManager takes); the link stays a link. A
 * writer that does not (the credential store) locks and replaces the path
 * itself and reads it with `O_NOFOLLOW`.
 */
import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { lstat, mkdir, open, readdir, readlink, realpath, rename, rm, stat, type FileHandle } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import lockfile from "proper-lockfile";

/** A lock not refreshed for this long belongs to a dead writer; a temporary file this old is a dead writer's too. */
export const STALE_LOCK_MS = 10_000;
/** How long a writer waits for another writer's lock: longer in total (about 12 s) than a dead writer's lock takes to go stale. */
const LOCK_RETRIES = { retries: 60, factor: 1.2, minTimeout: 20, maxTimeout: 250 };
/** Links followed at most (as the kernel's own limit for path resolution). */
const MAX_LINK_HOPS = 40;

/** The name of a temporary file of `path`: hidden, beside it, unique per process and write. */
function temporaryFor(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
}

/** Whether `name` is one of our temporary files of the file named `target`. */
function isTemporaryOf(name: string, target: string): boolean {
  const prefix = `.${target}.`;
  return name.startsWith(prefix) && /^\d+\.[0-9a-f]{8}\.tmp$/.test(name.slice(prefix.length));
}

async function writeAndClose(handle: FileHandle, data: string | Uint8Array, mode: number | undefined): Promise<void> {
  try {
    await handle.writeFile(data);
    // The mode is set before the file takes the real name: it is never visible with wider bits.
    if (mode !== undefined) await handle.chmod(mode);
    await handle.sync();
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw error;
  }
  await handle.close();
}

/**
 * Replaces `path` with `data` atomically (temporary file, flush, rename). The
 * new file gets `mode`, or keeps the bits of the file it replaces (0644 for a
 * new one). Whatever fails, the temporary file is removed and the old file is
 * untouched. `path` itself is replaced: a symbolic link there is not followed.
 */
export async function writeAtomically(path: string, data: string | Uint8Array, mode?: number): Promise<void> {
  const exact =
    mode ??
    (await stat(path).then(
      (info) => info.mode & 0o777,
      () => undefined,
    ));
  const temporary = temporaryFor(path);
  const handle = await open(temporary, "wx", exact ?? 0o644);
  try {
    await writeAndClose(handle, data, exact);
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => undefined);
    throw error;
  }
}

/**
 * Removes the temporary files of `path` that are older than `olderThanMs`
 * (every one with 0). Call it only while no live writer of `path` can be
 * writing (holding its lock). Returns how many were removed.
 */
export async function removeTemporaries(path: string, olderThanMs: number = STALE_LOCK_MS): Promise<number> {
  const folder = dirname(path);
  const names = await readdir(folder).catch(() => [] as string[]);
  const before = Date.now() - olderThanMs;
  let removed = 0;
  for (const name of names.filter((candidate) => isTemporaryOf(candidate, basename(path)))) {
    const file = join(folder, name);
    const info = await lstat(file).catch(() => undefined);
    if (!info?.isFile() || (olderThanMs > 0 && info.mtimeMs > before)) continue;
    await rm(file, { force: true });
    removed++;
  }
  return removed;
}

/**
 * The file a write to `path` really changes: the final target of its symbolic
 * links (which need not exist yet), in its folder's canonical form. The
 * folder is created when missing.
 */
async function linkTarget(path: string): Promise<string> {
  let current = resolve(path);
  for (let hops = 0; hops <= MAX_LINK_HOPS; hops++) {
    const info = await lstat(current).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return undefined;
      throw error;
    });
    if (!info?.isSymbolicLink()) {
      await mkdir(dirname(current), { recursive: true });
      return join(await realpath(dirname(current)), basename(current));
    }
    current = resolve(dirname(current), await readlink(current));
  }
  throw Object.assign(new Error(`${path}: too many levels of symbolic links`), { code: "ELOOP" });
}

export interface LockedFile {
  /** The file that is read and replaced: `path`, or the final target of its links when they are followed. */
  readonly target: string;
  /** Replaces the target atomically (see writeAtomically). */
  write(data: string | Uint8Array, mode?: number): Promise<void>;
}

export interface FileLockOptions {
  /** Follow symbolic links to write through them (settings), or lock and replace the path itself (credentials). */
  readonly followLinks: boolean;
  /** The error to throw when the lock cannot be had (the lock library's error is its cause). */
  readonly lockFailed: (cause: unknown) => Error;
}

/**
 * Runs `work` holding the cross-process lock of `path` (`<file>.lock`, a
 * folder, as proper-lockfile and Pi's SettingsManager take it): the locks of
 * the link and of its target when links are followed. Under the lock it
 * first removes temporary files dead writers left. The locks are released
 * whatever happens.
 */
export async function withFileLock<T>(path: string, options: FileLockOptions, work: (file: LockedFile) => Promise<T>): Promise<T> {
  // In canonical form: a folder reached through a linked parent is one folder, with one lock.
  await mkdir(dirname(resolve(path)), { recursive: true });
  const own = join(await realpath(dirname(resolve(path))), basename(path));
  const target = options.followLinks ? await linkTarget(own) : own;
  const releases: Array<() => Promise<void>> = [];
  try {
    // Always the link first, then its target: two writers never wait for each other in a circle.
    for (const file of new Set([own, target])) {
      const release = await lockfile
        .lock(file, { realpath: false, retries: LOCK_RETRIES, stale: STALE_LOCK_MS, onCompromised: () => undefined })
        .catch((error: unknown) => {
          throw options.lockFailed(error);
        });
      releases.push(release);
    }
    for (const file of new Set([own, target])) await removeTemporaries(file);
    return await work({ target, write: (data, mode) => writeAtomically(target, data, mode) });
  } finally {
    for (const release of releases.reverse()) await release().catch(() => undefined);
  }
}

/** Reads `path` without following a symbolic link there (`ELOOP` when it is one). */
export async function readFileNoFollow(path: string): Promise<string> {
  const handle = await open(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  try {
    return await handle.readFile("utf8");
  } finally {
    await handle.close();
  }
}
