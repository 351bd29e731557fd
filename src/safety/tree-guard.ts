/**
 * Nothing of a server's process tree outlives the process that started it
 * (Pi, `pi-mcp test`), however that process ends:
 *
 * - it exits (`process.exit`, the event loop drained, an uncaught error):
 *   every tree still running is signalled from the `exit` event;
 * - a SIGINT, SIGTERM or SIGHUP that nobody else handles (it would end the
 *   process at once, without `exit`): the same, then the signal is raised
 *   again so the process ends as it would have (listeners of signal-exit,
 *   which act the same way, do not count as handling it). A signal that Pi handles
 *   (SIGTERM, SIGHUP: Pi ends its session, which closes every server) is
 *   left to Pi;
 * - it is killed (SIGKILL, a crash) on Linux: a watchdog, one small `sh`
 *   per process, in a session of its own, waits for the end of a pipe only
 *   this process holds, then ends every process that carries this
 *   process's tree marker and their descendants (SIGTERM, SIGKILL after
 *   `WATCHDOG_GRACE_MS`).
 *
 * Shared by every copy of the module (Pi re-imports the extension on
 * `/reload`): one marker prefix, one watchdog, one set of hooks per process.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";

/** The environment variable that marks every process of a server's tree. */
export const TREE_VARIABLE = "PI_MCP_TREE";

/** How long the watchdog gives a tree between SIGTERM and SIGKILL once its host is gone. */
export const WATCHDOG_GRACE_MS = 2_000;

/** A tree the guard ends when the process ends. */
export interface GuardedTree {
  signalNow(signal: NodeJS.Signals): void;
}

interface Guard {
  /** This process's marker prefix: random, so no other process's trees match. */
  readonly token: string;
  count: number;
  readonly live: Set<GuardedTree>;
  installed: boolean;
  /** Whether a watchdog runs for this process (then it sends the SIGKILL after a grace). */
  watchdog: boolean;
  /** The watchdog's process id (it leads a process group of its own), while it runs. */
  watchdogPid?: number;
}

const GUARD = Symbol.for("pi-mcp.process-tree-guard");
const FATAL_SIGNALS: readonly NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];

function guard(): Guard {
  const global = globalThis as { [GUARD]?: Guard };
  global[GUARD] ??= { token: randomBytes(8).toString("hex"), count: 0, live: new Set(), installed: false, watchdog: false };
  return global[GUARD];
}

/** A fresh marker for one server's tree (`<process token>.<n>`). */
export function nextMarker(): string {
  const state = guard();
  return `${state.token}.${++state.count}`;
}

/** Whether `marker` is one this process gave out (a tree it started). */
export function isOwnMarker(marker: string | undefined): boolean {
  return marker?.startsWith(`${guard().token}.`) ?? false;
}

/** Guards `tree` until the returned release is called (the tree has ended). */
export function guardTree(tree: GuardedTree): () => void {
  const state = guard();
  install(state);
  state.live.add(tree);
  return () => state.live.delete(tree);
}

/** How many trees this process guards now (for tests). */
export function guardedTrees(): number {
  return guard().live.size;
}

/** Signals every guarded tree now: SIGTERM when the watchdog follows up with SIGKILL, else SIGKILL. */
function endAllNow(state: Guard): void {
  const signal = state.watchdog ? "SIGTERM" : "SIGKILL";
  for (const tree of state.live) {
    try {
      tree.signalNow(signal);
    } catch {
      // The process is ending: nothing more can be done for this tree.
    }
  }
}

function install(state: Guard): void {
  if (state.installed) return;
  state.installed = true;
  process.on("exit", () => {
    endAllNow(state);
    if (state.live.size === 0) stopWatchdog(state);
  });
  if (process.platform === "win32") return; // no POSIX signals to re-raise; Pi's own quit closes every server
  for (const signal of FATAL_SIGNALS) {
    const onSignal = () => {
      // Someone else handles it (Pi ends its session, which closes every server; `exit` catches the rest).
      if (process.listenerCount(signal) - 1 - signalExitListeners() > 0) return;
      endAllNow(state);
      process.removeListener(signal, onSignal);
      process.kill(process.pid, signal);
    };
    process.on(signal, onSignal);
  }
  // Not on the way of the server that is starting now (its first message is sent first); a process that ends before
  // the timer fires has had its trees ended by the hooks above.
  setTimeout(() => startWatchdog(state), 0).unref();
}

/**
 * How many of the signal's listeners belong to signal-exit (v3 and v4; a
 * dependency of proper-lockfile and many others): like ours, each ends the
 * process only when it is the only kind of listener left, so they must not
 * count as someone who handles the signal, or neither would end it.
 */
function signalExitListeners(): number {
  const holder = process as unknown as Record<string | symbol, { count?: unknown } | undefined>;
  const count = (emitter: { count?: unknown } | undefined) => (typeof emitter?.count === "number" ? emitter.count : 0);
  return count(holder.__signal_exit_emitter__) + count(holder[Symbol.for("signal-exit emitter")]);
}

/**
 * The watchdog: reads its stdin, which only this process holds (a pipe,
 * close-on-exec, so no server inherits it), until the end, which comes when
 * this process is gone however it ended; then ends every tree of this
 * process: each process whose environment carries one of its markers, and
 * every descendant of those (a child started with an environment of its
 * own), found before any is signalled (a child whose parent ended is
 * re-parented away) and kept by id and start time across the scans that
 * follow (`awk` finds the descendants; without it, the marker holders only).
 * SIGTERM, then SIGKILL once all are gone or the grace is over, to every
 * member found again then (and twice more, for what forked meanwhile).
 */
const WATCHDOG_SCRIPT = String.raw`
read -r _
marked() { grep -lzs "^PI_MCP_TREE=$1\." /proc/[0-9]*/environ | sed 's|^/proc/\([0-9]*\)/environ$|\1|'; }
members() {
  if ! command -v awk >/dev/null 2>&1; then for p in $(marked "$1"); do printf '%s: ' "$p"; done; return; fi
  cat /proc/[0-9]*/stat 2>/dev/null | awk -v marked="$(marked "$1" | tr '\n' ' ')" -v known="$2" -v self="$$" '
    { r = $0; sub(/^.*\) /, "", r); n = split(r, f, " ");
      if (n >= 20 && f[1] != "Z" && f[1] != "X" && $1 != self && $1 > 1) { parent[$1] = f[2]; start[$1] = f[20] } }
    END {
      n = split(marked, a, " "); for (i = 1; i <= n; i++) if (a[i] in start) m[a[i]] = 1
      n = split(known, b, " "); for (i = 1; i <= n; i++) { split(b[i], c, ":"); if ((c[1] in start) && (c[2] == "" || start[c[1]] == c[2])) m[c[1]] = 1 }
      do { more = 0; for (p in parent) if (!(p in m) && (parent[p] in m)) { m[p] = 1; more = 1 } } while (more)
      for (p in m) printf "%s:%s ", p, start[p]
    }'
}
pids() { printf '%s\n' $1 | sed 's/:.*//'; }
k=$(members "$1" ""); [ -n "$k" ] || exit 0
p=$(pids "$k")
kill -TERM $p 2>/dev/null
i=0
while [ "$i" -lt "$2" ]; do
  sleep 0.1 2>/dev/null || sleep 1
  alive=""; for q in $p; do kill -0 "$q" 2>/dev/null && alive=1; done
  [ -n "$alive" ] || break
  i=$((i + 1))
done
for round in 1 2 3; do
  k=$(members "$1" "$k"); [ -n "$k" ] || exit 0
  kill -KILL $(pids "$k") 2>/dev/null
  sleep 0.1 2>/dev/null || sleep 1
done
`;

/**
 * Ends the watchdog and its subshells at once (its process group), on an exit
 * that leaves no tree to end: it has nothing to do, and it would otherwise
 * outlive this process for as long as its scan of every process takes.
 */
function stopWatchdog(state: Guard): void {
  if (state.watchdogPid === undefined) return;
  try {
    process.kill(-state.watchdogPid, "SIGKILL");
  } catch {
    // already gone
  }
  state.watchdogPid = undefined;
}

function startWatchdog(state: Guard): void {
  if (process.platform !== "linux" || !existsSync("/proc/self/environ") || !existsSync("/bin/sh")) return;
  try {
    const watchdog = spawn("/bin/sh", ["-c", WATCHDOG_SCRIPT, "pi-mcp-watchdog", state.token, String(WATCHDOG_GRACE_MS / 100)], {
      // A session of its own: a terminal's Ctrl+C or a kill of Pi's process group does not reach it.
      detached: true,
      stdio: ["pipe", "ignore", "ignore"],
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    });
    state.watchdog = true;
    state.watchdogPid = watchdog.pid;
    const gone = () => {
      state.watchdog = false;
      state.watchdogPid = undefined;
    };
    watchdog.once("error", gone);
    watchdog.once("exit", gone);
    watchdog.stdin?.on("error", () => undefined);
    // Neither the watchdog nor its pipe keeps this process alive.
    watchdog.unref();
    (watchdog.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  } catch {
    state.watchdog = false; // no watchdog: the exit and signal hooks still end the trees
  }
}
