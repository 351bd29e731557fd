/**
 * Drives OUR host (McpHost + the real kernel from src/composition.ts) against
 * real servers: a real EffectiveConfig built by resolveConfig, a temporary
 * private folder (0700), a truncator mirroring Pi's 2,000-line / 50 KB limit,
 * and a ToolSink that records every register/deactivate call.
 *
 *   const h = await startHost({ basic: fixtureServer("basic") }, { retry: { maxRetries: 0 } });
 *   await h.waitForState("basic", "connected");
 *   const out = await h.call("mcp__basic__echo", { text: "hi" });
 *   await h.stop();   // or stopAllHosts() in afterEach
 */
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CommandEnvironment } from "../../src/kernel/commands.ts";
import { createKernel } from "../../src/composition.ts";
import { resolveConfig } from "../../src/config/resolve.ts";
import { checkedScope } from "../../src/config/schema.ts";
import type { EffectiveConfig, RetryPolicy } from "../../src/kernel/settings.ts";
import type { Kernel } from "../../src/kernel/kernel.ts";
import type { HostServices } from "../../src/kernel/services.ts";
import type { ConnectionPool } from "../../src/runtime/pool.ts";
import type { HostContext, Truncator } from "../../src/kernel/types.ts";
import type { ConnectionState, ConnectionStatus } from "../../src/kernel/status.ts";
import { McpHost, type BridgedTool, type HostCatalogs, type HostEvents, type ToolSink } from "../../src/runtime/host.ts";
import type { CallOptions, ToolOutcome } from "../../src/runtime/tool-call.ts";
import { createRedactor } from "../../src/safety/text.ts";
import { everythingPath, fixturePath, nodePath, packageServerPath } from "./servers.ts";
import { eventWaiter } from "./wait.ts";

export { eventually, eventWaiter, isAlive, until, type EventWaiter } from "./wait.ts";

/** Pi's limits for model-facing text (DEFAULT_MAX_LINES / DEFAULT_MAX_BYTES in pi-coding-agent). */
export const PI_MAX_LINES = 2000;
export const PI_MAX_BYTES = 50 * 1024;

/**
 * Pi's truncateHead (whole lines, at most 2,000 lines and 50 KB), as the
 * extension applies it: a first line that alone exceeds 50 KB is cut by bytes.
 * Written out here so the suite does not pay pi-coding-agent's import time.
 */
export const piTruncate: Truncator = (text) => {
  const lines = text.split("\n");
  let bytes = 0;
  const kept: string[] = [];
  for (const line of lines) {
    const size = Buffer.byteLength(line, "utf8") + (kept.length > 0 ? 1 : 0);
    if (kept.length >= PI_MAX_LINES || bytes + size > PI_MAX_BYTES) break;
    kept.push(line);
    bytes += size;
  }
  if (kept.length === lines.length) return { text, truncated: false };
  const head =
    kept.length > 0
      ? kept.join("\n")
      : Buffer.from(text, "utf8")
          .subarray(0, PI_MAX_BYTES)
          .toString("utf8")
          .replace(/\uFFFD$/, "");
  return { text: head, truncated: true };
};

/** A raw (settings.json-shaped) server definition. */
export type RawDefinition = Record<string, unknown>;

/** A stdio definition running one of test/fixtures/servers. */
export function fixtureServer(name: string, environment: Record<string, string> = {}, extra: RawDefinition = {}): RawDefinition {
  return { command: nodePath(), args: [fixturePath(name)], environment, ...extra };
}

/** A stdio definition running an npm-installed server (see packageServerPath) with `args`. */
export function packageServer(pkg: string, args: readonly string[] = [], extra: RawDefinition = {}): RawDefinition {
  return { command: nodePath(), args: [packageServerPath(pkg), ...args], ...extra };
}

/** server-everything over stdio. */
export function everythingStdio(extra: RawDefinition = {}): RawDefinition {
  return { command: nodePath(), args: [everythingPath(), "stdio"], ...extra };
}

export interface StartHostOptions {
  readonly connectTimeoutMs?: number;
  readonly requestTimeoutMs?: number;
  readonly retry?: Partial<RetryPolicy>;
  /** The environment `${NAME}` expands from (default: process.env). */
  readonly env?: NodeJS.ProcessEnv;
  /** The host's cwd (relative stdio `cwd`s resolve against it); default: the test process's cwd. */
  readonly cwd?: string;
  readonly kernel?: Kernel;
  /** Where connections wait between sessions (default: none, nothing is reused). */
  readonly pool?: ConnectionPool;
  /** Pi's services as the plugins see them (default: none, like the CLI). */
  readonly services?: HostServices;
  /** Start connecting at once (default true). */
  readonly start?: boolean;
  /** More top-level `mcp` settings (e.g. `roots`, `exposure`). */
  readonly settings?: Record<string, unknown>;
  /** Whether the project counts as trusted in the built config (default false). */
  readonly projectTrusted?: boolean;
  /** The host's status callback (Pi's footer uses it): called synchronously on every state change. */
  readonly events?: HostEvents;
  /** The host's private folder (default: a fresh 0700 folder in the test's temporary root); it must exist. */
  readonly privateDir?: string;
  /** Persisted catalogs as the Pi entry gives them (default: none, like the CLI). */
  readonly catalogs?: HostCatalogs;
}

/** Every call the host made on its ToolSink, plus the resulting view. */
export interface RecordingSink extends ToolSink {
  /** Each register() call's tools, in order. */
  readonly registerCalls: BridgedTool[][];
  /** Each deactivate() call's names, in order. */
  readonly deactivateCalls: string[][];
  /** The newest registration of every name ever registered. */
  readonly tools: Map<string, BridgedTool>;
  /** Names registered and not deactivated since. */
  readonly active: Set<string>;
}

/** A sink that records what the host did with it; `changed` is called after every call. */
export function recordingSink(changed: () => void = () => {}): RecordingSink {
  const sink: RecordingSink = {
    registerCalls: [],
    deactivateCalls: [],
    tools: new Map(),
    active: new Set(),
    register(tools) {
      sink.registerCalls.push([...tools]);
      for (const tool of tools) {
        sink.tools.set(tool.name, tool);
        sink.active.add(tool.name);
      }
      changed();
    },
    deactivate(names) {
      sink.deactivateCalls.push([...names]);
      for (const name of names) sink.active.delete(name);
      changed();
    },
  };
  return sink;
}

export interface TestHost {
  readonly host: McpHost<Kernel>;
  readonly sink: RecordingSink;
  readonly config: EffectiveConfig;
  readonly privateDir: string;
  status(name: string): ConnectionStatus;
  /** Every state `name` has been in, in order, as the host reported each change (transient ones included). */
  states(name: string): ConnectionState[];
  /** Resolves once `name` is in (one of) `state`; rejects with its status after `timeoutMs`. */
  waitForState(name: string, state: ConnectionState | readonly ConnectionState[], timeoutMs?: number): Promise<ConnectionStatus>;
  /** Resolves once `condition` (about the host or its sink) holds, re-checked at each state change and sink call. */
  waitUntil(condition: () => boolean, timeoutMs?: number, describe?: () => string): Promise<void>;
  /** Resolves once at least `count` tools (optionally only `mcp__<server>__…` ones) are active. */
  waitForTools(count: number, options?: { server?: string; timeoutMs?: number }): Promise<string[]>;
  /** Executes an active Pi tool the way Pi would (through the sink's registration). */
  call(piToolName: string, args?: Record<string, unknown>, options?: CallOptions): Promise<ToolOutcome>;
  stop(): Promise<void>;
}

const running = new Set<TestHost>();

/** Stops every host started by startHost that is still running (use in afterEach). */
export async function stopAllHosts(): Promise<void> {
  await Promise.allSettled([...running].map((host) => host.stop()));
}

/** Builds the EffectiveConfig a global settings.json `{ mcp: {...} }` would give. */
export function buildConfig(
  servers: Record<string, RawDefinition>,
  options: StartHostOptions = {},
  file = "/nonexistent/settings.json",
): EffectiveConfig {
  const mcp = {
    // Generous: a loaded machine may take seconds to start a server; tests of the timeout set their own.
    connectTimeoutMs: options.connectTimeoutMs ?? 20_000,
    requestTimeoutMs: options.requestTimeoutMs ?? 10_000,
    retry: { maxRetries: 1, initialDelayMs: 50, maxDelayMs: 200, backoffFactor: 1.5, ...options.retry },
    ...options.settings,
    servers,
  };
  const config = resolveConfig(checkedScope("global", file, mcp), undefined, options.env ?? process.env, {
    globalPath: file,
    projectPath: "/nonexistent/.pi/settings.json",
    projectTrusted: options.projectTrusted ?? false,
  });
  if (!config.valid)
    throw new Error(`invalid test settings: ${config.issues.map((issue) => `${issue.path}: ${issue.message}`).join("; ")}`);
  return config;
}

export async function startHost(servers: Record<string, RawDefinition>, options: StartHostOptions = {}): Promise<TestHost> {
  const config = buildConfig(servers, options);
  const root = await realpath(await mkdtemp(join(tmpdir(), "pi-mcp-runtime-")));
  const privateDir = options.privateDir ?? join(root, "private");
  if (!options.privateDir) await mkdir(privateDir, { mode: 0o700 });
  const context: HostContext = {
    cwd: options.cwd ?? process.cwd(),
    agentDir: root,
    privateDir,
    config,
    redact: createRedactor(config.secrets),
    truncate: piTruncate,
    services: options.services ?? {},
  };
  const kernel = options.kernel ?? createKernel();
  // Every state change and every call on the sink wakes the waits below.
  const changes = eventWaiter();
  const history = new Map<string, ConnectionState[]>();
  const sink = recordingSink(changes.notify);
  const host: McpHost<Kernel> = new McpHost(
    kernel,
    context,
    sink,
    {
      ...options.events,
      statusChanged: () => {
        for (const { name, state } of host.status()) {
          const seen = history.get(name) ?? [];
          if (seen.at(-1) !== state) history.set(name, [...seen, state]);
        }
        changes.notify();
        options.events?.statusChanged?.();
      },
    },
    options.pool,
    options.catalogs,
  );
  let stopped = false;
  const status = (name: string): ConnectionStatus => {
    const connection = host.server(name);
    if (!connection) throw new Error(`no connection "${name}"`);
    return connection.status();
  };
  const testHost: TestHost = {
    host,
    sink,
    config,
    privateDir,
    status,
    states: (name) => [...(history.get(name) ?? [])],
    waitUntil: (
      condition,
      timeoutMs = 30_000,
      describe = () => `status ${JSON.stringify(host.status())}; active: ${[...sink.active].join(", ")}`,
    ) => changes.until(condition, timeoutMs, describe),
    async waitForState(name, state, timeoutMs = 30_000) {
      const wanted: readonly ConnectionState[] = typeof state === "string" ? [state] : state;
      await changes.until(
        () => host.server(name) !== undefined && wanted.includes(status(name).state),
        timeoutMs,
        () => `"${name}" is not ${wanted.join("/")}: ${JSON.stringify(host.server(name)?.status())}`,
      );
      return status(name);
    },
    async waitForTools(count, { server, timeoutMs = 30_000 } = {}) {
      const mine = () => [...sink.active].filter((name) => server === undefined || name.startsWith(`mcp__${server}__`));
      await changes.until(
        () => mine().length >= count,
        timeoutMs,
        () => `${mine().length} of ${count} tools active; status ${JSON.stringify(host.status())}`,
      );
      return mine();
    },
    async call(piToolName, args = {}, callOptions = {}) {
      const tool = sink.tools.get(piToolName);
      if (!tool || !sink.active.has(piToolName))
        throw new Error(`no active tool "${piToolName}" (active: ${[...sink.active].slice(0, 30).join(", ")})`);
      return tool.execute(args, callOptions);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      running.delete(testHost);
      try {
        await host.shutdown();
      } finally {
        await rm(root, { recursive: true, force: true });
      }
    },
  };
  running.add(testHost);
  if (options.start !== false) await host.start();
  return testHost;
}

/**
 * Server processes (fixtures, server-everything) that are children of this
 * test process: what a stopped host must not leave behind.
 */
export function childServers(pattern: RegExp = /test\/fixtures\/servers|server-everything/): string[] {
  let listing = "";
  try {
    listing = execFileSync("ps", ["-o", "pid=,args=", "--ppid", String(process.pid)], { encoding: "utf8" });
  } catch {
    return []; // ps exits 1 when there is no child at all
  }
  return listing
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => pattern.test(line));
}

/** Kills the server processes of this test process that match `pattern` (left over by a failing test or a leak) and says which they were. */
export function killChildServers(pattern?: RegExp): string[] {
  const left = childServers(pattern);
  for (const line of left) {
    try {
      process.kill(Number(line.split(" ")[0]), "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
  return left;
}

/** All the text of an outcome, joined by newlines. */
export function textOf(outcome: ToolOutcome): string {
  return outcome.content.flatMap((item) => (item.type === "text" ? [item.text] : [])).join("\n");
}

/** A `/mcp` environment (Pi surface) whose runtime is the test host. */
export function piEnvironment(h: TestHost): CommandEnvironment {
  return {
    surface: "pi",
    agentDir: "/nonexistent",
    cwd: process.cwd(),
    env: process.env,
    projectTrusted: false,
    savedTrust: null,
    credentials: { has: async () => false, remove: async () => false },
    createKernel: async () => createKernel(),
    loadConfig: async () => h.config,
    runtime: {
      status: async () => ({ config: h.config, servers: h.host.status(), extra: h.host.statusLines() }),
      reconnect: (name) => h.host.reconnect(name),
      settled: (ms) => h.host.settled(ms),
      host: async () => h.host,
      settingsChanged: async () => {},
    },
  };
}
