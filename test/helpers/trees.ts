// Servers that are process trees (test/fixtures/servers/tree.mjs, started
// through wrap.sh), and what a test needs to know about them: which processes
// the tree has, and whether any of them still runs.
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { RawDefinition } from "./host.ts";
import { fixtureEvents, nodePath, type FixtureEvent } from "./servers.ts";
import { eventually, until } from "./wait.ts";

const fixtures = fileURLToPath(new URL("../fixtures/servers/", import.meta.url));
export const WRAP_SH = path.join(fixtures, "wrap.sh");
export const TREE_MJS = path.join(fixtures, "tree.mjs");

export type TreeRole = "wrapper" | "server" | "helper" | "unmarked" | "daemon" | "escapee";

export interface TreeShape {
  /** Started as `sh wrap.sh node tree.mjs` (the script does not `exec`); default true. */
  readonly wrapped?: boolean;
  /** Every process ignores SIGTERM, the server also its closed stdin. */
  readonly stubborn?: boolean;
  /** A forked helper that holds the server's stdout and stderr. */
  readonly helper?: boolean;
  /** A child of the server started with an environment of its own (no PI_MCP_TREE). */
  readonly unmarked?: boolean;
  /** A double-forked daemon in a session of its own. */
  readonly daemon?: boolean;
  /** The server never answers. */
  readonly silent?: boolean;
  /** The server exits (code 3) once its helpers are started, before answering anything. */
  readonly exits?: boolean;
  /** A process that left the tree on purpose (no marker, a session of its own) holds the server's stdout and stderr. */
  readonly escapee?: boolean;
}

/** The roles a tree of `shape` starts. */
export function rolesOf(shape: TreeShape): TreeRole[] {
  return [
    ...((shape.wrapped ?? true) ? (["wrapper"] as const) : []),
    "server" as const,
    ...(shape.helper ? (["helper"] as const) : []),
    ...(shape.unmarked ? (["unmarked"] as const) : []),
    ...(shape.daemon ? (["daemon"] as const) : []),
    ...(shape.escapee ? (["escapee"] as const) : []),
  ];
}

/** The environment of a tree server of `shape` that writes its events to `events`. */
export function treeEnvironment(events: string, shape: TreeShape): Record<string, string> {
  return {
    FIXTURE_EVENTS: events,
    ...(shape.stubborn && { TREE_STUBBORN: "1" }),
    ...(shape.helper && { TREE_HELPER: "1" }),
    ...(shape.unmarked && { TREE_UNMARKED: "1" }),
    ...(shape.daemon && { TREE_DAEMON: "1" }),
    ...(shape.silent && { TREE_SILENT: "1" }),
    ...(shape.exits && { TREE_EXIT: "1" }),
    ...(shape.escapee && { TREE_ESCAPEE: "1" }),
  };
}

/** A settings.json stdio definition of a tree server. */
export function treeServer(events: string, shape: TreeShape = {}, extra: RawDefinition = {}): RawDefinition {
  const server = [nodePath(), TREE_MJS];
  return {
    command: (shape.wrapped ?? true) ? "sh" : server[0],
    args: (shape.wrapped ?? true) ? [WRAP_SH, ...server] : server.slice(1),
    environment: treeEnvironment(events, shape),
    ...extra,
  };
}

/** A fixture event of a tree, with the role of the process that wrote it (wrap.sh writes no time). */
export interface TreeEvent extends Omit<FixtureEvent, "at"> {
  readonly role: TreeRole;
  readonly at?: number;
}

export async function treeEvents(file: string): Promise<TreeEvent[]> {
  return (await fixtureEvents(file)) as readonly unknown[] as TreeEvent[];
}

/**
 * The process ids of every process of the tree(s) in `file`, once each role of
 * `shape` has started `count` times (the daemon starts a moment after the server answers).
 */
export async function treePids(file: string, shape: TreeShape, count = 1, timeoutMs = 30_000): Promise<number[]> {
  const roles = rolesOf(shape);
  return eventually(
    async () => {
      const starts = (await treeEvents(file)).filter((event) => event.event === "start");
      const complete = roles.every((role) => starts.filter((event) => event.role === role).length >= count);
      return complete && starts.map((event) => event.pid);
    },
    timeoutMs,
    () => `not every role of ${roles.join(", ")} started ${count} time(s): ${readFileSafe(file)}`,
  );
}

function readFileSafe(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "(no events)";
  }
}

/**
 * Whether `pid` still runs. A zombie does not: it has ended and only waits
 * for its parent to collect its exit status (orphans are re-parented to an
 * init process that may collect them late, or, in some containers, never).
 */
export function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

/** The processes of `pids` that still run. */
export function stillRunning(pids: readonly number[]): number[] {
  return pids.filter(running);
}

/** Resolves once none of `pids` runs; rejects naming the ones left after `timeoutMs`. */
export function untilNoneRuns(pids: readonly number[], timeoutMs: number): Promise<void> {
  return until(
    () => stillRunning(pids).length === 0,
    timeoutMs,
    () => `still running: ${stillRunning(pids).join(", ")}`,
  );
}

/** SIGKILLs every process recorded in the event files `files` that still runs (a failed test's leftovers). */
export async function killRecorded(files: readonly string[]): Promise<void> {
  const pids = (await Promise.all(files.map(treeEvents))).flat().map((event) => event.pid);
  for (const pid of stillRunning([...new Set(pids)])) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
}
