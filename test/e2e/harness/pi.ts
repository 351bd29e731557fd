/**
 * Run a real Pi CLI (1.6.0 or 0.84.2) offline, with the scripted `faux` model from
 * `faux-provider.ts`, in a throwaway HOME. Print mode: `runPi`; RPC mode: `startPiRpc`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach } from "vitest";
import { crashGuardEnv } from "../../setup/crash-guard-env.ts";
import type { FauxLogEntry, FauxStep } from "./faux-provider.ts";

export type { FauxLogEntry, FauxStep };
export type PiVersion = "1.6" | "0.84";

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const BIN = join(REPO_ROOT, "node_modules/.bin");
/** Node 22 (the system node may be older). */
export const NODE = join(BIN, "node");
export const FAUX_PROVIDER = join(REPO_ROOT, "test/e2e/harness/faux-provider.ts");
const PACKAGES: Record<PiVersion, string> = {
  "1.6": "node_modules/@earendil-works/pi-coding-agent",
  "0.84": "node_modules/pi-coding-agent-0.84",
};
export const PI_VERSIONS: PiVersion[] = ["1.6", "0.84"];

/** Absolute path of the Pi CLI script for a version (its package.json `bin.pi`). */
export function piCli(version: PiVersion): string {
  const dir = join(REPO_ROOT, PACKAGES[version]);
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  return join(dir, typeof pkg.bin === "string" ? pkg.bin : pkg.bin.pi);
}

export interface PiHome {
  /** Temp HOME. */
  home: string;
  /** `<home>/.pi/agent` (also passed as PI_CODING_AGENT_DIR). */
  agentDir: string;
  /** Temp project directory, used as Pi's cwd. */
  cwd: string;
  cleanup(): Promise<void>;
}

/**
 * Remove a test home. Retries (Node's own linear backoff) when a file appears while the tree is
 * removed: a Pi that was just stopped can still be closing its session files.
 */
export function removeHome(root: string): Promise<void> {
  return rm(root, { recursive: true, force: true, maxRetries: 5 });
}

export async function makePiHome(): Promise<PiHome> {
  const root = await mkdtemp(join(tmpdir(), "pi-mcp-e2e-"));
  const home = join(root, "home");
  const agentDir = join(home, ".pi/agent");
  const cwd = join(root, "project");
  await mkdir(agentDir, { recursive: true });
  await mkdir(cwd, { recursive: true });
  return { home, agentDir, cwd, cleanup: () => removeHome(root) };
}

export interface PiOptions {
  version?: PiVersion; // default "1.6"
  /** Where Pi runs: `home` is HOME (agent dir `<home>/.pi/agent`), `cwd` the project. */
  home: string;
  cwd: string;
  /** Extra CLI args, after the harness's own (e.g. `["-p", "/probe", "hello"]`). */
  args?: string[];
  /** Loaded with `-e`, before the faux provider. */
  extensions?: string[];
  /** Added to (or, with `undefined`, removed from) the harness environment. */
  env?: Record<string, string | undefined>;
  /** Faux model script (see faux-provider.ts); written to a file in `home`. */
  script?: FauxStep[];
  /** Pass `--no-session` (default true). */
  noSession?: boolean;
  /** Load the faux provider and select `--provider faux --model faux-1` (default true). */
  faux?: boolean;
}

let runCounter = 0;

/** Build the command line and environment for one Pi process. */
function prepare(opts: PiOptions, modeArgs: string[]) {
  const n = `${process.pid}-${++runCounter}`;
  const log = join(opts.home, `faux-log-${n}.jsonl`);
  const env: Record<string, string | undefined> = {
    PATH: [BIN, process.env.PATH ?? ""].join(delimiter),
    HOME: opts.home,
    TMPDIR: process.env.TMPDIR,
    LANG: "C.UTF-8",
    PI_CODING_AGENT_DIR: join(opts.home, ".pi/agent"),
    PI_OFFLINE: "1",
    PI_SKIP_VERSION_CHECK: "1",
    PI_TELEMETRY: "0",
    PI_MCP_FAUX_LOG: log,
    // An uncaught exception or unhandled rejection in this Pi fails the test that started it.
    ...crashGuardEnv(),
  };
  if (opts.script) {
    const file = join(opts.home, `faux-script-${n}.json`);
    writeFileSync(file, JSON.stringify(opts.script));
    env.PI_MCP_FAUX_SCRIPT = file;
  }
  Object.assign(env, opts.env);
  const faux = opts.faux ?? true;
  const extensions = [...(opts.extensions ?? []), ...(faux ? [FAUX_PROVIDER] : [])];
  const args = [
    piCli(opts.version ?? "1.6"),
    ...modeArgs,
    ...((opts.noSession ?? true) ? ["--no-session"] : []),
    ...extensions.flatMap((e) => ["-e", e]),
    ...(faux ? ["--provider", "faux", "--model", "faux-1"] : []),
    ...(opts.args ?? []),
  ];
  const cleanEnv = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)) as Record<string, string>;
  return { args, env: cleanEnv, log };
}

/** Requests the faux model received, in order (one JSON line each). */
export function readFauxLog(file: string): FauxLogEntry[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

/** PIDs of `pid` and all its descendants (Linux /proc). */
export function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // exited meanwhile
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    out.push(p);
    for (const c of children.get(p) ?? []) walk(c);
  };
  walk(pid);
  return out;
}

/** SIGKILL a process, its descendants (even those in other process groups) and its group. */
export function killProcessTree(pid: number): void {
  const pids = processTree(pid);
  for (const p of [-pid, ...pids]) {
    try {
      process.kill(p, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

// Detached children do not die with the test process: kill any still running when it exits.
const live = new Set<number>();
process.on("exit", () => live.forEach(killProcessTree));

function spawnPi(args: string[], env: Record<string, string>, cwd: string, stdin: "ignore" | "pipe"): ChildProcess {
  // detached: own process group, so the whole group can be killed.
  const child = spawn(NODE, args, { cwd, env, stdio: [stdin, "pipe", "pipe"], detached: true });
  if (child.pid) live.add(child.pid);
  child.on("exit", () => live.delete(child.pid!));
  return child;
}

export interface PiRunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  durationMs: number;
  /** Every request the faux model received during this run. */
  requests: FauxLogEntry[];
}

/** How long a Pi run, an RPC command or an awaited record may take before it counts as stuck. */
const STUCK_MS = 45_000;

/**
 * Run `pi` once (stdin from /dev/null) and wait for it to exit. On timeout its whole process
 * tree is killed and `timedOut` is set. For print mode include `-p` in `args`.
 * `timeoutFrom`: the timeout starts once stderr matches it (default: at once), so a run is
 * timed from the moment it is known to be under way, however slowly Pi started.
 */
export function runPi(opts: PiOptions & { timeoutMs?: number; timeoutFrom?: RegExp }): Promise<PiRunResult> {
  const { args, env, log } = prepare(opts, []);
  const started = Date.now();
  const child = spawnPi(args, env, opts.cwd, "ignore");
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (d) => (stdout += d));
  child.stderr!.setEncoding("utf8").on("data", (d) => (stderr += d));
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const startTimeout = () =>
    (timer ??= setTimeout(() => {
      timedOut = true;
      killProcessTree(child.pid!);
    }, opts.timeoutMs ?? STUCK_MS));
  if (opts.timeoutFrom) child.stderr!.on("data", () => opts.timeoutFrom!.test(stderr) && startTimeout());
  else startTimeout();
  return new Promise((resolvePromise, reject) => {
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolvePromise({
        code,
        signal,
        stdout,
        stderr,
        timedOut,
        durationMs: Date.now() - started,
        requests: readFauxLog(log),
      });
    });
  });
}

/** A Pi process in RPC mode (`--mode rpc`). Records are the JSON lines Pi wrote to stdout. */
export interface PiRpc {
  child: ChildProcess;
  /** Every stdout record so far: responses, session events, extension_ui_request. */
  records: any[];
  stderr(): string;
  /** Send a command (an `id` is added) and resolve with its `response` record. */
  send(command: Record<string, unknown>, timeoutMs?: number): Promise<any>;
  /** Resolve with the first record at index >= `since` matching `match`. */
  waitFor(match: (record: any) => boolean, opts?: { since?: number; timeoutMs?: number }): Promise<any>;
  /**
   * Send `prompt`; then, if it started a run, wait for `agent_settled` (1.x: `disposition` is
   * "started"; 0.84: `get_state.isStreaming` or an `agent_start` was seen). Extension commands
   * answer after their handler finished. `settle` overrides the check. Resolves with the
   * response and every record since the prompt was sent.
   */
  prompt(message: string, opts?: { settle?: boolean; timeoutMs?: number }): Promise<{ response: any; records: any[] }>;
  /** Requests the faux model received so far. */
  requests(): FauxLogEntry[];
  /** Close stdin, wait for exit (up to `timeoutMs`), then kill the process tree. */
  close(timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Start `pi --mode rpc`. Dialog requests (`select`, `confirm`, `input`, `editor`) are answered
 * with `{cancelled: true}` unless `onUiRequest` returns a response body (e.g. `{confirmed: true}`).
 */
export async function startPiRpc(
  opts: PiOptions & { onUiRequest?: (request: any) => Record<string, unknown> | undefined },
): Promise<PiRpc> {
  const { args, env, log } = prepare(opts, ["--mode", "rpc"]);
  const child = spawnPi(args, env, opts.cwd, "pipe");
  const records: any[] = [];
  const waiters = new Set<() => void>();
  let stderr = "";
  let buffer = "";
  let exited = false;
  let exit: { code: number | null; signal: NodeJS.Signals | null } = { code: null, signal: null };
  const exitPromise = new Promise<void>((r) =>
    child.on("close", (code, signal) => {
      exited = true;
      exit = { code, signal };
      for (const w of waiters) w();
      r();
    }),
  );
  child.on("error", (e) => (stderr += `spawn error: ${e}\n`));
  child.stdin!.on("error", () => {}); // EPIPE after exit: reported through `close`
  const write = (record: unknown) => {
    if (!exited) child.stdin!.write(`${JSON.stringify(record)}\n`);
  };
  child.stderr!.setEncoding("utf8").on("data", (d) => (stderr += d));
  // Split on LF only (readline would also split on U+2028/U+2029, which JSON strings may hold).
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    buffer += chunk;
    for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
      const line = buffer.slice(0, nl).replace(/\r$/, "");
      buffer = buffer.slice(nl + 1);
      if (!line.trim()) continue;
      let record: any;
      try {
        record = JSON.parse(line);
      } catch {
        record = { type: "unparsed", line };
      }
      records.push(record);
      if (record.type === "extension_ui_request" && ["select", "confirm", "input", "editor"].includes(record.method)) {
        write({ type: "extension_ui_response", id: record.id, ...(opts.onUiRequest?.(record) ?? { cancelled: true }) });
      }
      for (const w of waiters) w();
    }
  });

  const waitFor: PiRpc["waitFor"] = (match, { since = 0, timeoutMs = STUCK_MS } = {}) =>
    new Promise((resolvePromise, reject) => {
      const check = () => {
        const found = records.slice(since).find(match);
        if (found !== undefined) done(() => resolvePromise(found));
        else if (exited) done(() => reject(new Error(`pi exited (${JSON.stringify(exit)}) before the awaited record\n${stderr}`)));
      };
      const timer = setTimeout(
        () => done(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for a record\n${stderr}`))),
        timeoutMs,
      );
      const done = (fn: () => void) => {
        clearTimeout(timer);
        waiters.delete(check);
        fn();
      };
      waiters.add(check);
      check();
    });

  let nextId = 0;
  const send: PiRpc["send"] = (command, timeoutMs) => {
    const id = `h${++nextId}`;
    const since = records.length;
    write({ ...command, id });
    return waitFor((r) => r.type === "response" && r.id === id, { since, timeoutMs });
  };

  const prompt: PiRpc["prompt"] = async (message, { settle, timeoutMs = STUCK_MS } = {}) => {
    const since = records.length;
    const response = await send({ type: "prompt", message }, timeoutMs);
    if (!response.success) throw new Error(`prompt failed: ${response.error}`);
    let wait = settle;
    if (wait === undefined && response.data?.disposition) wait = response.data.disposition === "started";
    if (wait === undefined) {
      // 0.84 reports no disposition: a run started if one is streaming or already began.
      const state = await send({ type: "get_state" }, timeoutMs);
      wait = state.data?.isStreaming === true || records.slice(since).some((r) => r.type === "agent_start");
    }
    if (wait) await waitFor((r) => r.type === "agent_settled", { since, timeoutMs });
    return { response, records: records.slice(since) };
  };

  const close: PiRpc["close"] = async (timeoutMs = 5_000) => {
    if (!exited) {
      child.stdin!.end();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([exitPromise, new Promise((r) => (timer = setTimeout(r, timeoutMs)))]);
      clearTimeout(timer);
      if (!exited) {
        killProcessTree(child.pid!);
        await exitPromise;
      }
    }
    return exit;
  };

  return { child, records, stderr: () => stderr, send, waitFor, prompt, requests: () => readFauxLog(log), close };
}

/**
 * A real Pi with pi-mcp in print mode that waits for MCP to settle (`/mcp wait`)
 * before `prompt`, its faux model following `script`. The usual shape of an
 * end-to-end test: the model calls an MCP tool, then repeats what it got.
 */
export function runPiWithMcp(
  home: Pick<PiHome, "home" | "cwd">,
  prompt: string,
  script: FauxStep[],
  options: { version?: PiVersion; env?: Record<string, string | undefined>; timeoutMs?: number } = {},
): Promise<PiRunResult> {
  return runPi({
    ...(options.version && { version: options.version }),
    home: home.home,
    cwd: home.cwd,
    extensions: [REPO_ROOT],
    args: ["-p", "/mcp wait", prompt],
    ...(options.env && { env: options.env }),
    script,
    timeoutMs: options.timeoutMs ?? 90_000,
  });
}

/** The faux model's two steps for "call `name` with `args`, then say what it returned" (prefixed "model saw: "). */
export function callThenRepeat(name: string, args: Record<string, unknown>): FauxStep[] {
  return [{ toolCall: { name, arguments: args } }, { textFromLastToolResult: true, prefix: "model saw: " }];
}

/** The current test's Pi home, and a way to write its global settings. */
export interface PiHomeScene extends Pick<PiHome, "home" | "agentDir" | "cwd"> {
  /** Writes `<agentDir>/settings.json`. */
  writeSettings(settings: unknown): Promise<void>;
}

/**
 * A fresh Pi home for each test of the calling file (made before, removed after
 * each test). The returned object always reads the current test's home.
 */
export function usePiHome(): PiHomeScene {
  let current: PiHome | undefined;
  beforeEach(async () => {
    current = await makePiHome();
  });
  afterEach(async () => {
    await current?.cleanup();
    current = undefined;
  });
  const now = (): PiHome => {
    if (!current) throw new Error("usePiHome: no test is running");
    return current;
  };
  return {
    get home() {
      return now().home;
    },
    get agentDir() {
      return now().agentDir;
    },
    get cwd() {
      return now().cwd;
    },
    writeSettings: (settings) => writeFile(join(now().agentDir, "settings.json"), JSON.stringify(settings, null, 2)),
  };
}

/** Runs `/mcp <line>` in an RPC Pi; resolves with the text of the notices it showed (its output). */
export async function mcpInRpc(rpc: PiRpc, line: string, timeoutMs?: number): Promise<string> {
  const { records } = await rpc.prompt(`/mcp ${line}`, timeoutMs === undefined ? {} : { timeoutMs });
  return records
    .filter((record) => record.type === "extension_ui_request" && record.method === "notify")
    .map((record) => String(record.message))
    .join("\n");
}
