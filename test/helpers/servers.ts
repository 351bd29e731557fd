// Helpers to locate and run the fixture MCP servers (test/fixtures/servers) and
// the reference server-everything. Every spawned server binds 127.0.0.1 (or, for
// server-everything, all interfaces; connect via 127.0.0.1) and is stopped by
// `stop()`, which kills it and waits for it to exit.
import { spawn, type ChildProcess } from "node:child_process";
import { randomInt } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { eventually } from "./wait.ts";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const fixturesDir = path.join(repoRoot, "test/fixtures/servers");

/** A server process listening on a loopback port. */
export interface RunningServer {
  /** The MCP endpoint: `/mcp` for Streamable HTTP, `/sse` for SSE. */
  url: string;
  /** `http://127.0.0.1:<port>`, for side routes like a fixture's `/drop-sessions`. */
  baseUrl: string;
  port: number;
  process: ChildProcess;
  /** Kills the process (SIGTERM, then SIGKILL after 3 s) and resolves once it has exited. */
  stop(): Promise<void>;
}

/** Absolute path of a fixture server; `name` with or without `.mjs` (e.g. `'basic'`). */
export function fixturePath(name: string): string {
  const file = path.join(fixturesDir, name.endsWith(".mjs") ? name : `${name}.mjs`);
  if (!existsSync(file)) throw new Error(`No such fixture server: ${file}`);
  return file;
}

/** Absolute path of server-everything's entry script (`node <it> stdio|sse|streamableHttp`). */
export function everythingPath(): string {
  return path.join(repoRoot, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
}

/**
 * Absolute path of an npm-installed server's entry script: its package.json
 * `bin` (the only one, or the one named like the package), e.g.
 * `packageServerPath('@modelcontextprotocol/server-filesystem')`.
 */
export function packageServerPath(pkg: string): string {
  const dir = path.join(repoRoot, "node_modules", pkg);
  const manifest = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as {
    bin?: string | Record<string, string>;
    main?: string;
  };
  const bins = typeof manifest.bin === "string" ? [manifest.bin] : Object.values(manifest.bin ?? {});
  const entry = bins[0] ?? manifest.main;
  if (!entry) throw new Error(`${pkg} names no bin or main`);
  return path.join(dir, entry);
}

/** A Node >= 22 binary: the current one if it qualifies, else the project's `node` package. */
export function nodePath(): string {
  if (Number(process.versions.node.split(".")[0]) >= 22) return process.execPath;
  return path.join(repoRoot, "node_modules/node/bin/node");
}

/**
 * Stdio launch parameters for a fixture, shaped for `StdioClientTransport`
 * (`{ command, args, env }`). Note the SDK transport merges `env` over its own
 * small default environment (HOME, LOGNAME, PATH, SHELL, TERM, USER).
 */
export function fixtureCommand(
  name: string,
  env: Record<string, string> = {},
): { command: string; args: string[]; env: Record<string, string> } {
  return { command: nodePath(), args: [fixturePath(name)], env };
}

/**
 * The ports the system hands out itself (to `listen(0)` and to outgoing connections): a port chosen
 * below them can only be taken by a process that names it, so another test's server cannot grab it
 * between the moment it is chosen and the moment the caller binds it.
 */
function systemPortRange(): { low: number; high: number } {
  try {
    const [low, high] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);
    if (low && high) return { low, high };
  } catch {
    // not Linux: the IANA dynamic range
  }
  return { low: 49_152, high: 65_535 };
}

/** Above the ports tests name themselves (the default OAuth callback 19876, 8080, …). */
const CHOSEN_PORTS_FROM = 20_000;

/** Whether 127.0.0.1:`port` can be listened on now. */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/**
 * A free TCP port on 127.0.0.1 for the caller to bind next, chosen at random below the system's own
 * range (see systemPortRange): parallel tests and the conformance runner start many `listen(0)`
 * servers, and a port the system chose could be handed to one of them before the caller binds it.
 */
export async function freePort(): Promise<number> {
  const span = systemPortRange().low - CHOSEN_PORTS_FROM;
  for (let tries = 0; span > 0 && tries < 100; tries++) {
    const port = CHOSEN_PORTS_FROM + randomInt(span);
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port on 127.0.0.1 between ${CHOSEN_PORTS_FROM} and the system's own range`);
}

/** Keeps the last few KiB a process wrote, for error messages; also keeps its pipes drained. */
function captureOutput(child: ChildProcess): () => string {
  let tail = "";
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString()).slice(-4096);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  return () => tail;
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

function stopper(child: ChildProcess): () => Promise<void> {
  return async () => {
    if (exited(child)) return;
    const done = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
    await done;
    clearTimeout(timer);
  };
}

/**
 * Resolves with the first match of `pattern` in what `child` writes (stdout and
 * stderr): the line a server prints once it listens. Rejects if `child` exits
 * first or after `timeoutMs`.
 */
function waitForOutput(child: ChildProcess, pattern: RegExp, output: () => string, timeoutMs: number): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let seen = "";
    const finish = (settle: () => void) => {
      clearTimeout(timer);
      child.stdout?.off("data", onData);
      child.stderr?.off("data", onData);
      child.off("exit", onExit);
      settle();
    };
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      const match = pattern.exec(seen);
      if (match) finish(() => resolve(match));
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null) =>
      finish(() => reject(new Error(`the server exited (code ${code}, signal ${signal}) before printing ${pattern}:\n${output()}`)));
    const timer = setTimeout(
      () => finish(() => reject(new Error(`the server did not print ${pattern} within ${timeoutMs} ms:\n${output()}`))),
      timeoutMs,
    );
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", onExit);
    if (exited(child)) onExit(child.exitCode, child.signalCode);
  });
}

/**
 * Starts server-everything over Streamable HTTP (`url` ends in `/mcp`) or SSE
 * (`url` ends in `/sse`; it posts to `/message`) on a free port.
 */
export async function startEverything(mode: "streamableHttp" | "sse", { timeoutMs = 15_000 } = {}): Promise<RunningServer> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const child = spawn(nodePath(), [everythingPath(), mode], {
      env: { ...process.env, PORT: String(port) },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const output = captureOutput(child);
    const stop = stopper(child);
    try {
      // It prints this once it listens (streamableHttp: "… listening on port N", sse: "… running on port N").
      await waitForOutput(child, new RegExp(`(listening|running) on port ${port}\\b`), output, timeoutMs);
    } catch (error) {
      lastError = error; // most likely the port was taken in between: try another
      await stop();
      continue;
    }
    const baseUrl = `http://127.0.0.1:${port}`;
    return { url: `${baseUrl}${mode === "sse" ? "/sse" : "/mcp"}`, baseUrl, port, process: child, stop };
  }
  throw lastError;
}

/** The pinned supergateway bridge's entry (a devDependency). */
export function supergatewayPath(): string {
  return path.join(repoRoot, "node_modules/supergateway/dist/index.js");
}

/**
 * Starts supergateway serving `stdioCommand` (a shell command line) over
 * Streamable HTTP on a free port, stateless (a fresh server process per HTTP
 * request) unless `stateful`; `url` ends in `/mcp`.
 */
export async function startSupergateway(stdioCommand: string, { stateful = false, timeoutMs = 15_000 } = {}): Promise<RunningServer> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const args = [supergatewayPath(), "--stdio", stdioCommand, "--outputTransport", "streamableHttp", "--port", String(port)];
    const child = spawn(nodePath(), stateful ? [...args, "--stateful"] : args, { stdio: ["ignore", "pipe", "pipe"] });
    const output = captureOutput(child);
    const stop = stopper(child);
    try {
      await waitForOutput(child, new RegExp(`Listening on port ${port}\\b`), output, timeoutMs);
    } catch (error) {
      lastError = error; // most likely the port was taken in between: try another
      await stop();
      continue;
    }
    const baseUrl = `http://127.0.0.1:${port}`;
    return { url: `${baseUrl}/mcp`, baseUrl, port, process: child, stop };
  }
  throw lastError;
}

/**
 * Starts an HTTP fixture (e.g. `'http-basic'`) as `node <fixture> 0 ...args`, and
 * resolves once it prints `LISTENING <port>`. Its stdin is a pipe held by this
 * process, so the fixture also exits if the test process dies.
 */
export async function startHttpFixture(
  name: string,
  args: string[] = [],
  { timeoutMs = 10_000, env = {} as Record<string, string> } = {},
): Promise<RunningServer> {
  const child = spawn(nodePath(), [fixturePath(name), "0", ...args], {
    env: { ...process.env, ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const output = captureOutput(child);
  const stop = stopper(child);
  try {
    const port = Number((await waitForOutput(child, /LISTENING (\d+)/, output, timeoutMs))[1]);
    const baseUrl = `http://127.0.0.1:${port}`;
    return { url: `${baseUrl}/mcp`, baseUrl, port, process: child, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** One line of a fixture's FIXTURE_EVENTS file (witness, stubborn). */
export interface FixtureEvent {
  readonly event: string;
  readonly pid: number;
  /** Date.now() in the server process. */
  readonly at: number;
  readonly tool?: string;
  /** A request the client sent, in fixtures that log them (prompt-server-2026). */
  readonly method?: string;
  readonly params?: Readonly<Record<string, unknown>>;
}

/** The events a fixture wrote to its FIXTURE_EVENTS file, oldest first (none while it does not exist). */
export async function fixtureEvents(file: string): Promise<FixtureEvent[]> {
  const text = await readFile(file, "utf8").catch(() => "");
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as FixtureEvent);
}

const HANDSHAKES = new Set(["server/discover", "initialize"]);

/** The handshake requests (`server/discover`, `initialize`) each process of a fixture received, process by process, oldest first. */
export async function handshakesByProcess(file: string): Promise<string[][]> {
  const byPid = new Map<number, string[]>();
  for (const { event, pid } of await fixtureEvents(file)) {
    const seen = byPid.get(pid) ?? [];
    if (HANDSHAKES.has(event)) seen.push(event);
    byPid.set(pid, seen);
  }
  return [...byPid.values()];
}

/** Resolves with the first event in `file` that `match` accepts, once it is written; rejects after `timeoutMs`. */
export async function fixtureEvent(file: string, match: (event: FixtureEvent) => boolean, timeoutMs = 15_000): Promise<FixtureEvent> {
  return eventually(
    async () => (await fixtureEvents(file)).find(match),
    timeoutMs,
    () => `no such event in ${file}`,
  );
}
