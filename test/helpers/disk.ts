/**
 * A small real filesystem that tests can fill up: a tmpfs mounted on a fresh
 * folder (the tests run as root here). Where mounting is not allowed, the disk
 * is an ordinary folder and "full" is fault injection (every FileHandle write
 * fails with ENOSPC); the helper says so on stderr, so a run never passes on
 * the weaker check silently.
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, open, realpath, rm, rmdir, type FileHandle } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { vi } from "vitest";

export interface SmallDisk {
  /** The mounted folder. */
  readonly root: string;
  /** "tmpfs" for a real small filesystem, "fault injection" where mounting failed. */
  readonly kind: "tmpfs" | "fault injection";
  /** Fills every free byte (a filler file written until ENOSPC). */
  fill(): Promise<void>;
  /** Removes the filler: the disk has room again. */
  free(): Promise<void>;
  /** Unmounts and removes the folder. */
  remove(): Promise<void>;
}

const FILLER = ".filler";

async function fillUntilFull(path: string): Promise<void> {
  const chunk = Buffer.alloc(16 * 1024, 0x78);
  const handle = await open(path, "a");
  try {
    for (;;) await handle.write(chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
  } finally {
    await handle.close().catch(() => undefined);
  }
  // A tmpfs can still take the last partial page: fill that too, byte by byte.
  const last = await open(path, "a");
  try {
    for (;;) await last.write(Buffer.from("x"));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
  } finally {
    await last.close().catch(() => undefined);
  }
}

let warned = false;

/** Mounts a tmpfs of `bytes` on a new folder (or, where that is not allowed, sets up fault injection). */
export async function smallDisk(bytes = 1024 * 1024): Promise<SmallDisk> {
  const root = await realpath(await mkdtemp(join(tmpdir(), "pi-mcp-disk-")));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${bytes},mode=0755`, "tmpfs", root], { stdio: "pipe" });
  } catch (error) {
    if (!warned)
      process.stderr.write(
        `[smallDisk] cannot mount a tmpfs (${String(error).split("\n")[0]}): a full disk is simulated by fault injection\n`,
      );
    warned = true;
    return faultInjectedDisk(root);
  }
  return {
    root,
    kind: "tmpfs",
    fill: () => fillUntilFull(join(root, FILLER)),
    free: () => rm(join(root, FILLER), { force: true }),
    async remove() {
      execFileSync("umount", ["-l", root], { stdio: "pipe" });
      await rmdir(root);
    },
  };
}

async function faultInjectedDisk(root: string): Promise<SmallDisk> {
  const probe = await open(join(root, ".probe"), "w");
  const prototype = Object.getPrototypeOf(probe) as FileHandle;
  await probe.close();
  await rm(join(root, ".probe"));
  let full = false;
  const enospc = () => Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC", errno: -28, syscall: "write" });
  const originalWriteFile = prototype.writeFile;
  const originalWrite = prototype.write;
  const spies = [
    vi.spyOn(prototype, "writeFile").mockImplementation(function (this: FileHandle, ...args: Parameters<FileHandle["writeFile"]>) {
      return full ? Promise.reject(enospc()) : originalWriteFile.apply(this, args);
    }),
    vi.spyOn(prototype, "write").mockImplementation(function (this: FileHandle, ...args: unknown[]) {
      return full ? Promise.reject(enospc()) : (originalWrite as (...a: unknown[]) => Promise<unknown>).apply(this, args);
    } as FileHandle["write"]),
  ];
  return {
    root,
    kind: "fault injection",
    fill: async () => {
      full = true;
    },
    free: async () => {
      full = false;
    },
    async remove() {
      for (const spy of spies) spy.mockRestore();
      await rm(root, { recursive: true, force: true });
    },
  };
}
