/**
 * Temporary Pi agent folders and projects for the configuration, command and
 * CLI tests. Everything is a real folder made with fs.mkdtemp; nothing of fs
 * is mocked. `env()` points PI_CODING_AGENT_DIR (and HOME) at the sandbox so
 * no test can touch the real ~/.pi.
 */
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, readdir, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, onTestFinished, vi } from "vitest";
import lockfile from "proper-lockfile";
import { crashGuardEnv } from "../setup/crash-guard-env.ts";
import { until } from "./wait.ts";
import { projectPath, REPO_ROOT } from "./repo.ts";
import { runCli as runProgram } from "../../cli/main.ts";
import type { CommandResult } from "../../src/commands/index.ts";

export { REPO_ROOT, projectPath };
/** The built program; vitest builds dist/ before the tests when it is missing or stale (test/setup/built-core.ts). */
export const CLI_BIN = join(REPO_ROOT, "dist/cli/index.mjs");

/** A Node >= 22 binary: the current one if it qualifies, else the project's `node` package. */
export function nodeBinary(): string {
  if (Number(process.versions.node.split(".")[0]) >= 22) return process.execPath;
  return join(REPO_ROOT, "node_modules/.bin/node");
}

/**
 * Counts attempts to take the lock `lockPath` from now on (proper-lockfile takes
 * a lock by creating its folder through its default fs, graceful-fs); the spy
 * ends with the test.
 */
function lockAttempts(lockPath: string): () => number {
  const lockerFs = createRequire(createRequire(import.meta.url).resolve("proper-lockfile"))("graceful-fs") as {
    mkdir: (...args: unknown[]) => void;
  };
  const mkdir = vi.spyOn(lockerFs, "mkdir");
  onTestFinished(() => mkdir.mockRestore());
  return () => mkdir.mock.calls.filter(([path]) => path === lockPath).length;
}

/**
 * Runs `run` while another holder keeps `file`'s lock (`<file>.lock`, as Pi
 * takes it): once `run` has found the lock taken and tried again (it waits),
 * `whileWaiting` looks at the files; then the lock is released and `run`'s
 * result comes back. A `run` that finishes while the lock is held fails.
 */
export async function runWhileLocked<T>(file: string, run: () => Promise<T>, whileWaiting: () => Promise<void>): Promise<T> {
  const release = await lockfile.lock(file, { realpath: false });
  const attempts = lockAttempts(`${file}.lock`);
  let finished = false;
  const pending = run().finally(() => (finished = true));
  pending.catch(() => undefined); // awaited below; a failure is not left unhandled meanwhile
  try {
    await until(
      () => attempts() >= 2 || finished,
      15_000,
      () => `${attempts()} attempts to take the lock`,
    );
    if (finished) throw new Error("it finished while the lock was held");
    await whileWaiting();
  } finally {
    await release();
  }
  return pending;
}

/** The configuration commands never connect: a kernel request is a test failure. */
export function noKernel(): never {
  throw new Error("a configuration command asked for a kernel");
}

/**
 * Runs one pi-mcp command line in this process exactly as the program does
 * (cli/main.ts: the command's spec reads it, the shared command runs), without a kernel;
 * what the command printed is the result's output.
 */
export async function runCli(argv: readonly string[], cwd: string, env: NodeJS.ProcessEnv): Promise<CommandResult> {
  const io = { cwd, env, terminal: false, write: () => {}, createKernel: async () => noKernel() };
  return (await runProgram(argv, io)).result;
}

export interface Sandbox {
  /** Canonical (realpath) root of the sandbox. */
  readonly root: string;
  /** Pi's agent folder: what PI_CODING_AGENT_DIR points at. */
  readonly agentDir: string;
  /** A project folder (cwd for commands). */
  readonly projectDir: string;
  /** `<agentDir>/settings.json` */
  readonly globalSettings: string;
  /** `<projectDir>/.pi/settings.json` */
  readonly projectSettings: string;
  /** A minimal process environment pointing Pi at this sandbox, plus `extra`. */
  env(extra?: Record<string, string>): NodeJS.ProcessEnv;
  writeJson(path: string, value: unknown): Promise<void>;
  writeText(path: string, text: string): Promise<void>;
  readJson(path: string): Promise<unknown>;
  readText(path: string): Promise<string>;
  /** Writes `<agentDir>/trust.json` exactly as given. */
  trust(decisions: Record<string, boolean>): Promise<void>;
  cleanup(): Promise<void>;
}

export async function createSandbox(): Promise<Sandbox> {
  const root = await realpath(await mkdtemp(join(tmpdir(), "pi-mcp-test-")));
  const agentDir = join(root, "agent");
  const projectDir = join(root, "project");
  await mkdir(agentDir, { recursive: true });
  await mkdir(projectDir, { recursive: true });
  const writeText = async (path: string, text: string) => {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, text);
  };
  return {
    root,
    agentDir,
    projectDir,
    globalSettings: join(agentDir, "settings.json"),
    projectSettings: join(projectDir, ".pi", "settings.json"),
    env: (extra = {}) => ({ PATH: projectPath(), HOME: root, PI_CODING_AGENT_DIR: agentDir, ...extra }),
    writeJson: (path, value) => writeText(path, `${JSON.stringify(value, null, 2)}\n`),
    writeText,
    readJson: async (path) => JSON.parse(await readFile(path, "utf8")) as unknown,
    readText: (path) => readFile(path, "utf8"),
    trust: (decisions) => writeText(join(agentDir, "trust.json"), JSON.stringify(decisions)),
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}

/** Registers a fresh sandbox per test (and its removal); call the result inside a test. */
export function useSandbox(): () => Sandbox {
  let current: Sandbox | undefined;
  beforeEach(async () => {
    current = await createSandbox();
  });
  afterEach(async () => {
    await current?.cleanup();
    current = undefined;
  });
  return () => {
    if (!current) throw new Error("sandbox used outside a test");
    return current;
  };
}

/** Files in a folder other than the ones named (temporary files, lock folders). */
export async function strayFiles(folder: string, expected: readonly string[]): Promise<string[]> {
  if (!existsSync(folder)) return [];
  return (await readdir(folder)).filter((name) => !expected.includes(name));
}

/**
 * What a settings write left in Pi's agent folder besides `expected` and the
 * shape check's memory of the texts it passed (`pi-mcp/settings-checked.json`,
 * see src/config/shape-stamp.ts): temporary files, locks.
 */
export async function strayAgentFiles(agentDir: string, expected: readonly string[] = ["settings.json"]): Promise<string[]> {
  const stray = await strayFiles(agentDir, [...expected, "pi-mcp"]);
  const own = await strayFiles(join(agentDir, "pi-mcp"), ["settings-checked.json"]);
  return [...stray, ...own.map((name) => `pi-mcp/${name}`)];
}

export interface ProcessResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a process to completion, collecting its output; an uncaught exception in it fails the running test. */
export function runProcess(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const env = { ...options.env, ...crashGuardEnv(options.env) };
    const child = spawn(command, args, { cwd: options.cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 20_000);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The pi-mcp CLI from source as its own process, in a Pi home's project and on its settings (its agent folder). */
export function piMcpInHome(
  home: { readonly home: string; readonly agentDir: string; readonly cwd: string },
  argv: readonly string[],
  timeoutMs = 90_000,
): Promise<ProcessResult> {
  return runProcess(nodeBinary(), ["--experimental-transform-types", "--no-warnings", join(REPO_ROOT, "cli/index.ts"), ...argv], {
    cwd: home.cwd,
    env: { PATH: projectPath(), HOME: home.home, PI_CODING_AGENT_DIR: home.agentDir },
    timeoutMs,
  });
}
