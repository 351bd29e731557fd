/**
 * A local server is a process tree, not a process: a wrapper script that
 * starts the real server without `exec`, an `npx` shim, helpers the server
 * forks, a daemon it double-forks into a session of its own. Ending a server
 * ends its whole tree, and nothing of it outlives Pi.
 *
 * How the tree is found (Linux, through /proc): every process of this user
 * whose environment carries the tree's marker (`PI_MCP_TREE=<marker>`, set in
 * the server's environment and inherited by everything it starts, also by
 * processes that left its process group or session), the server process
 * itself, every process known to be a member before, and every descendant
 * (by parent id) of all those. A process is named by its id and start time,
 * so an id the system gave to an unrelated process after a member ended is
 * never signalled. Elsewhere on POSIX `ps` gives the descendants of the
 * server process (no environments: a daemon that re-parented itself is not
 * found); on Windows `taskkill /T /F` ends the tree.
 *
 * What is not found: a process that drops the marker from its environment,
 * and is no descendant of a process that carries it (it left the tree on
 * purpose).
 */
import { execFile, execFileSync, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { guardTree, isOwnMarker, nextMarker, TREE_VARIABLE, type GuardedTree } from "./tree-guard.ts";

export { TREE_VARIABLE } from "./tree-guard.ts";

/** How often the members' end is checked while a tree is asked to end (no system event tells us). */
const POLL_MS = 25;
/** How long SIGKILLed members may take to be gone (a process in uninterruptible sleep) before the end gives up waiting. */
const KILL_WAIT_MS = 1_000;
/** How often a tree is scanned again after SIGKILL for members that forked meanwhile. */
const KILL_ROUNDS = 3;

/** One process, as a scan saw it. `start` tells it apart from a later process with the same id. */
interface Seen {
  readonly pid: number;
  readonly ppid: number;
  readonly start: string;
  /** The value of its tree marker variable; undefined when it has none or it cannot be read. */
  readonly marker: string | undefined;
}

export type ScanStrategy = "proc" | "ps" | "windows";

/** How this platform's processes are seen: /proc on Linux, `ps` on other POSIX systems. */
export function defaultStrategy(): ScanStrategy {
  if (process.platform === "win32") return "windows";
  if (process.platform === "linux") {
    try {
      readFileSync("/proc/self/stat", "latin1");
      return "proc";
    } catch {
      // /proc is not mounted (a container without it): `ps` is what is left.
    }
  }
  return "ps";
}

export interface EndTiming {
  /** How long the tree may take to end on its own (its stdin is closed) before SIGTERM. */
  readonly politeMs: number;
  /** How long after SIGTERM before SIGKILL. */
  readonly termMs: number;
  /** Resolves when the tree's root process has exited (an event, where there is one), ending the polite wait early. */
  readonly rootExited?: Promise<unknown>;
}

/**
 * One server's process tree. Made before the server starts (its marker goes
 * into the server's environment), given the server's process id once it runs.
 */
export class ProcessTree implements GuardedTree {
  /** The value of `PI_MCP_TREE` in the server's environment. */
  readonly marker: string;
  private readonly strategy: ScanStrategy;
  private root: number | undefined;
  /** When the root started (clock ticks since boot, /proc only): no member can have started before it. */
  private rootStart = 0;
  /** Every member seen so far, by id, with its start time. */
  private readonly known = new Map<number, string>();
  private release: (() => void) | undefined;
  private ending: Promise<void> | undefined;

  constructor(options: { marker?: string; strategy?: ScanStrategy; root?: number } = {}) {
    this.marker = options.marker ?? nextMarker();
    this.strategy = options.strategy ?? defaultStrategy();
    this.root = options.root;
  }

  /** The server process runs: the tree is guarded (ended when Pi exits, is killed, or receives a fatal signal) until it has ended. */
  adopt(pid: number): void {
    this.root = pid;
    const start = this.strategy === "proc" ? statOf(readProcSync(`/proc/${pid}/stat`))?.start : undefined;
    if (start !== undefined) {
      this.known.set(pid, start);
      this.rootStart = Number(start);
    }
    this.release ??= guardTree(this);
  }

  /** The processes of the tree alive now. */
  async members(): Promise<number[]> {
    if (this.strategy === "windows") return this.root === undefined ? [] : [this.root];
    return this.collect(this.strategy === "proc" ? await scanProc(this.rootStart).catch(() => []) : await scanPs());
  }

  /**
   * Ends the tree, once: a polite wait, then SIGTERM to every member, then
   * SIGKILL to every member left; resolves when no member is left (or the
   * members SIGKILL did not end have had `KILL_WAIT_MS` to go).
   */
  end(timing: EndTiming): Promise<void> {
    this.ending ??= this.endOnce(timing).finally(() => {
      this.release?.();
    });
    return this.ending;
  }

  /** Signals every member now, synchronously (the process is exiting: there is no later). */
  signalNow(signal: NodeJS.Signals): void {
    if (this.strategy === "windows") {
      this.taskkill();
      return;
    }
    const seen = this.strategy === "proc" ? scanProcSync(this.rootStart) : parsePs(runPsSync());
    for (const pid of this.collect(seen)) signal1(pid, signal);
  }

  /** No longer guarded (for a tree made only to be signalled now). */
  forget(): void {
    this.release?.();
  }

  private async endOnce({ politeMs, termMs, rootExited }: EndTiming): Promise<void> {
    if (this.root === undefined) return; // never started: there is no tree
    if (this.strategy === "windows") {
      await withTimeout(rootExited, politeMs);
      this.taskkill();
      return;
    }
    // Polite: a server that exits when its stdin closes takes its helpers along, or leaves them for SIGTERM below.
    // A root that exited before (a wrapper that left the server running): the members that are left get the time.
    if (rootExited && this.alive(this.root)) await withTimeout(rootExited, politeMs);
    else if ((await this.members()).length > 0) await this.gone(politeMs);
    for (const [signal, waitMs] of [
      ["SIGTERM", termMs],
      ["SIGKILL", KILL_WAIT_MS],
    ] as const) {
      // The members known are signalled on time; a scan then finds those started meanwhile.
      const signalled = new Set([...this.known.keys()].filter((pid) => this.alive(pid)));
      for (const pid of signalled) signal1(pid, signal);
      const started = (await this.members()).filter((pid) => !signalled.has(pid));
      for (const pid of started) signal1(pid, signal);
      if (signalled.size + started.length === 0) return;
      await this.gone(waitMs);
    }
    // A member may have forked between the scan and its SIGKILL: those are found and killed too, a bounded number of times.
    for (let round = 0; round < KILL_ROUNDS; round++) {
      const members = await this.members();
      if (members.length === 0) return;
      for (const pid of members) signal1(pid, "SIGKILL");
      await this.gone(KILL_WAIT_MS);
    }
  }

  /** Whether every known member has ended (checked every POLL_MS for up to `waitMs`). */
  private async gone(waitMs: number): Promise<boolean> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      if (![...this.known.keys()].some((pid) => this.alive(pid))) return true;
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  /** Whether the member `pid` still runs (the same process: same start time, not a zombie). */
  private alive(pid: number): boolean {
    if (this.strategy !== "proc") return signal1(pid, 0);
    const seen = statOf(readProcSync(`/proc/${pid}/stat`));
    const start = this.known.get(pid);
    return seen !== undefined && (start === undefined || seen.start === start);
  }

  /** The members in a scan: the root, marker holders and known members, and all their descendants. */
  private collect(seen: readonly Seen[]): number[] {
    const children = new Map<number, Seen[]>();
    for (const entry of seen) {
      const siblings = children.get(entry.ppid);
      if (siblings) siblings.push(entry);
      else children.set(entry.ppid, [entry]);
    }
    const members = new Map<number, Seen>();
    // Known members by id and start time: an id the system gave to an unrelated process later is not a member.
    const isKnown = (entry: Seen) => this.known.get(entry.pid) === entry.start;
    const queue = seen.filter(
      (entry) => entry.marker === this.marker || isKnown(entry) || (entry.pid === this.root && !this.known.has(entry.pid)),
    );
    while (queue.length > 0) {
      const entry = queue.pop()!;
      // Never this process (a server cannot make its host a member), never init.
      if (members.has(entry.pid) || entry.pid === process.pid || entry.pid <= 1) continue;
      members.set(entry.pid, entry);
      queue.push(...(children.get(entry.pid) ?? []));
    }
    for (const member of members.values()) this.known.set(member.pid, member.start);
    return [...members.keys()];
  }

  private taskkill(): void {
    if (this.root === undefined) return;
    const system = process.env.SystemRoot ?? "C:\\Windows";
    const child = spawn(join(system, "System32", "taskkill.exe"), ["/T", "/F", "/PID", String(this.root)], {
      stdio: "ignore",
      windowsHide: true,
    });
    child.once("error", () => undefined);
    child.unref();
  }
}

/**
 * Kills a server process that must not outlive its host (SIGKILL, now), with
 * its whole tree when this process started it with a marker (a process
 * started some other way, by a third-party transport, is killed alone). One
 * already gone is fine.
 */
export function killTreeOf(pid: number, strategy: ScanStrategy = defaultStrategy()): void {
  const marker = strategy === "proc" ? markerIn(readProcSync(`/proc/${pid}/environ`)) : undefined;
  if (!isOwnMarker(marker)) {
    signal1(pid, "SIGKILL");
    return;
  }
  const tree = new ProcessTree({ marker, strategy });
  tree.adopt(pid);
  tree.signalNow("SIGKILL");
  tree.forget();
}

/** Sends `signal` (0: only asks whether the process exists); false when there is no such process (or it is not ours). */
function signal1(pid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(pid, signal);
    return true;
  } catch {
    return false;
  }
}

function withTimeout(promise: Promise<unknown> | undefined, ms: number): Promise<void> {
  if (!promise || ms <= 0) return Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.then(
      () => undefined,
      () => undefined,
    ),
    new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))),
  ]).finally(() => clearTimeout(timer));
}

// ---- /proc (Linux) ----

const MARKER_KEY = Buffer.from(`${TREE_VARIABLE}=`);

const readProcSync = (path: string): Buffer | undefined => {
  try {
    return readFileSync(path);
  } catch {
    return undefined; // ended meanwhile, or not ours
  }
};

/** The marker in a NUL-separated environment block. */
export function markerIn(environ: Buffer | undefined): string | undefined {
  if (!environ) return undefined;
  for (let at = environ.indexOf(MARKER_KEY); at !== -1; at = environ.indexOf(MARKER_KEY, at + 1)) {
    if (at !== 0 && environ[at - 1] !== 0) continue; // inside another variable's value
    const end = environ.indexOf(0, at);
    return environ.toString("latin1", at + MARKER_KEY.length, end === -1 ? environ.length : end);
  }
  return undefined;
}

/** Parent and start time from /proc/<pid>/stat (after the command name, which may hold spaces and parentheses); undefined once it has ended. */
function statOf(stat: Buffer | undefined): { ppid: number; start: string } | undefined {
  if (!stat) return undefined;
  const text = stat.toString("latin1");
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const state = fields[0];
  // A zombie has ended (only its exit status waits for its parent); X: dead.
  if (state === undefined || state === "Z" || state === "X" || fields[19] === undefined) return undefined;
  return { ppid: Number(fields[1]), start: fields[19] };
}

const isPid = (name: string) => /^\d+$/.test(name);

/**
 * Every process, from its stat; the environment (the marker) is read only for
 * processes started at or after `since` (a tree's root start: nothing started
 * before it can belong to the tree), which on a machine with many processes
 * is most of the cost saved.
 */
function scanProcSync(since: number): Seen[] {
  let names: string[];
  try {
    names = readdirSync("/proc").filter(isPid);
  } catch {
    return [];
  }
  return names.flatMap((name) => procEntry(name, since) ?? []);
}

/** One process of a scan: its stat, and its marker when it started at or after `since`. */
function procEntry(name: string, since: number): Seen | undefined {
  const stat = statOf(readProcSync(`/proc/${name}/stat`));
  if (!stat) return undefined;
  const marker = Number(stat.start) >= since ? markerIn(readProcSync(`/proc/${name}/environ`)) : undefined;
  return { pid: Number(name), ...stat, marker };
}

/** How many processes a scan reads before it lets the event loop run (reading /proc is fast, but there may be thousands). */
const SCAN_CHUNK = 64;

/**
 * The same, without holding the event loop: synchronous reads (/proc answers
 * from memory; going through the thread pool for each file costs several
 * times more), in chunks between which other work runs. A scan in progress
 * serves every tree whose root started no earlier than its `since`.
 */
let inFlight: { since: number; scan: Promise<Seen[]> } | undefined;
function scanProc(since: number): Promise<Seen[]> {
  if (inFlight && inFlight.since <= since) return inFlight.scan;
  const scan: Promise<Seen[]> = (async () => {
    const names = readdirSync("/proc").filter(isPid);
    const seen: Seen[] = [];
    for (let at = 0; at < names.length; at += SCAN_CHUNK) {
      if (at > 0) await new Promise((resolve) => setImmediate(resolve));
      for (const name of names.slice(at, at + SCAN_CHUNK)) {
        const entry = procEntry(name, since);
        if (entry) seen.push(entry);
      }
    }
    return seen;
  })().finally(() => {
    if (inFlight?.scan === scan) inFlight = undefined;
  });
  inFlight = { since, scan };
  return scan;
}

// ---- ps (other POSIX systems) ----

const PS_ARGS = ["-A", "-o", "pid=", "-o", "ppid=", "-o", "stat=", "-o", "lstart="];

async function scanPs(): Promise<Seen[]> {
  try {
    const { stdout } = await promisify(execFile)("ps", PS_ARGS, { encoding: "utf8", maxBuffer: 16 * 1024 * 1024 });
    return parsePs(stdout);
  } catch {
    return []; // no `ps`: nothing can be found beyond what signalling the root reaches
  }
}

function runPsSync(): string {
  try {
    return execFileSync("ps", PS_ARGS, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], maxBuffer: 16 * 1024 * 1024 });
  } catch {
    return "";
  }
}

export function parsePs(output: string): Seen[] {
  return output.split("\n").flatMap((line) => {
    const match = /^\s*(\d+)\s+(\d+)\s+(\S+)\s+(.+?)\s*$/.exec(line);
    if (!match || match[3]!.startsWith("Z")) return [];
    return [{ pid: Number(match[1]), ppid: Number(match[2]), start: match[4]!, marker: undefined }];
  });
}
