import { createHash } from "node:crypto";
import { inBackground } from "../kernel/async.ts";
import { killTreeOf } from "../safety/process-tree.ts";
import type { CachedStart } from "./catalog-cache.ts";
import type { ServerConnection } from "./connection.ts";

/** How long a released connection waits for the next session of the same Pi process. */
export const RETAIN_MS = 30_000;

interface Retained {
  readonly connection: ServerConnection;
  readonly timer: NodeJS.Timeout;
}

/**
 * What a replaced session offered Pi, for the next session of the same Pi
 * process: the Pi entry registers these tools while Pi loads it again (in
 * linear time), when the settings stamp it computes is the one recorded here.
 */
export interface Handover {
  /** The settings stamp (src/config/settings-stamp.ts) at handoff. */
  readonly digest: string;
  readonly cwd: string;
  readonly trusted: boolean;
  readonly start: CachedStart;
  readonly at: number;
}

/**
 * Live connections between two sessions of one Pi process. Pi re-imports the
 * extension for `/reload`, `/new`, `/resume` and `/fork`, so module state
 * dies; the pool lives on `globalThis`. A connection is taken by exactly one
 * session (an exclusive lease) and is closed when nobody takes it in time.
 */
export class ConnectionPool {
  private readonly retained = new Map<string, Retained[]>();
  private handoverValue: Handover | undefined;
  private readonly ttlMs: number;

  // Fields written out (no parameter properties): the Pi entry loads this file, and Node's type stripping can load it as it is.
  constructor(ttlMs = RETAIN_MS) {
    this.ttlMs = ttlMs;
  }

  /** Keeps what the replaced session offered (the newest handover replaces an older one). */
  handOver(handover: Handover): void {
    this.handoverValue = handover;
  }

  /** The newest handover, while it is younger than the retention time. */
  handover(now = Date.now()): Handover | undefined {
    const handover = this.handoverValue;
    return handover && now - handover.at < this.ttlMs ? handover : undefined;
  }

  /** Keeps `connection` for the retention time; closes it when nobody took it by then. */
  retain(key: string, connection: ServerConnection, ttlMs = this.ttlMs): void {
    connection.release();
    const timer = setTimeout(() => {
      this.remove(key, connection);
      inBackground(() => connection.close(), ignore);
    }, ttlMs);
    timer.unref?.(); // a waiting connection never keeps Pi alive
    const list = this.retained.get(key) ?? [];
    list.push({ connection, timer });
    this.retained.set(key, list);
  }

  /** Takes a retained connection for `key` that is still alive, if there is one. */
  take(key: string): ServerConnection | undefined {
    const list = this.retained.get(key);
    while (list && list.length > 0) {
      const { connection, timer } = list.shift()!;
      clearTimeout(timer);
      if (list.length === 0) this.retained.delete(key);
      if (connection.reusable) return connection;
      inBackground(() => connection.close(), ignore);
    }
    return undefined;
  }

  /** Closes everything retained (Pi quits). */
  async drain(): Promise<void> {
    const all = [...this.retained.values()].flat();
    this.retained.clear();
    this.handoverValue = undefined;
    for (const { timer } of all) clearTimeout(timer);
    await Promise.all(all.map(({ connection }) => connection.close()));
  }

  /** Process ids of retained stdio servers (killed if the process exits with them still waiting). */
  pids(): number[] {
    return [...this.retained.values()].flat().flatMap(({ connection }) => connection.status().pid ?? []);
  }

  get size(): number {
    return [...this.retained.values()].reduce((sum, list) => sum + list.length, 0);
  }

  private remove(key: string, connection: ServerConnection): void {
    const list = this.retained.get(key)?.filter((entry) => entry.connection !== connection) ?? [];
    if (list.length > 0) this.retained.set(key, list);
    else this.retained.delete(key);
  }
}

/** Closing a connection nobody owns any more has nobody to tell of a failure. */
const ignore = () => undefined;

const POOL = Symbol.for("pi-mcp.connection-pool");

/** The handover of this Pi process's pool, if there is a pool (read without making one: the Pi entry asks while Pi loads it). */
export function processHandover(): Handover | undefined {
  return (globalThis as { [POOL]?: ConnectionPool })[POOL]?.handover();
}

/** The one pool of this Pi process, shared by every copy of the extension module. */
export function processPool(): ConnectionPool {
  const global = globalThis as { [POOL]?: ConnectionPool };
  if (!global[POOL]) {
    const pool = new ConnectionPool();
    global[POOL] = pool;
    // No stdio child outlives Pi, even one still waiting in the pool.
    process.once("exit", () => {
      for (const pid of pool.pids()) killQuietly(pid);
    });
  }
  return global[POOL];
}

/**
 * What must match for a session to reuse a connection: the canonical project
 * root, the trust state, the resolved definition, the authentication identity,
 * the timeouts and the capabilities the client declared. Hashed, so no
 * resolved secret is kept as a key.
 */
export function poolKey(parts: {
  projectRoot: string;
  trusted: boolean;
  definition: unknown;
  authIdentity: string;
  connectTimeoutMs: number;
  requestTimeoutMs: number;
  requestDeadlineMs: number;
  capabilities: unknown;
}): string {
  return createHash("sha256").update(JSON.stringify(parts)).digest("hex");
}

/** Kills a server process that must not outlive its host, with its whole process tree when pi-mcp started it; one already gone is fine. */
export function killQuietly(pid: number): void {
  killTreeOf(pid);
}
