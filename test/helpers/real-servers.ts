// The real third-party servers and bridges as users configure them, and what
// a test needs to see their process trees: every process a server starts
// (npx's npm, a wrapper shell, the server, Chromium's dozen) carries a mark in
// its environment, inherited from the definition's `environment`, so the
// whole tree is found in /proc however it was forked, re-parented or
// daemonized, also after Pi has exited (see TreeWatch).
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { chmod, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { connect } from "node:net";
import { join } from "node:path";
import type { RawDefinition } from "./host.ts";
import { freePort } from "./servers.ts";
import { REPO_ROOT } from "./tmp.ts";
import { eventually } from "./wait.ts";

/** The variable that marks a server's processes; its value names one tree. */
export const TREE_MARK = "PI_MCP_TEST_TREE";

/** The version of a package pinned in the project's devDependencies. */
export function pinnedVersion(pkg: string): string {
  const manifest = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { devDependencies: Record<string, string> };
  const version = manifest.devDependencies[pkg];
  if (!version || !/^\d+\.\d+\.\d+$/.test(version)) throw new Error(`${pkg} is not pinned to an exact version in package.json`);
  return version;
}

/**
 * A server launched as its README says, `npx -y <package>@<version> …`, from a
 * project that has it installed (this repository: npx runs the installed copy
 * and never downloads; offline mode makes a missing one an error, not a download).
 * Its tree is marked with the value of `${PI_MCP_TEST_TREE}` in Pi's environment.
 */
export function npxServer(pkg: string, args: readonly string[] = [], environment: Record<string, string> = {}): RawDefinition {
  return {
    command: "npx",
    args: ["-y", `${pkg}@${pinnedVersion(pkg)}`, ...args],
    cwd: REPO_ROOT,
    environment: { npm_config_offline: "true", ...markedEnvironment(environment) },
  };
}

/** A definition's environment with the tree mark (from Pi's environment, as `${…}`). */
export function markedEnvironment(environment: Record<string, string> = {}): Record<string, string> {
  return { [TREE_MARK]: `\${${TREE_MARK}}`, ...environment };
}

/** Debian's Chromium (.ci/run installs it): no server downloads a browser of its own. */
export const CHROMIUM = "/usr/bin/chromium";

/** Playwright MCP (npx) on Debian's Chromium, headless; its profile and output under `dir`. */
export function playwrightServer(dir: string): RawDefinition {
  return npxServer("@playwright/mcp", [
    "--browser",
    "chromium",
    "--executable-path",
    CHROMIUM,
    "--headless",
    "--no-sandbox",
    "--user-data-dir",
    join(dir, "playwright-profile"),
    "--output-dir",
    join(dir, "playwright-output"),
  ]);
}

/**
 * Chrome DevTools MCP on Debian's Chromium, headless, through the user's shell
 * script that does not `exec` (settings for the server, then the server as a
 * child of the shell); the script and the profile under `dir`.
 */
export async function devtoolsServer(dir: string): Promise<RawDefinition> {
  const script = join(dir, "chrome-devtools.sh");
  await writeFile(script, `#!/bin/sh\nexport CHROME_DEVTOOLS_MCP_NO_UPDATE_CHECKS=1\nchrome-devtools-mcp "$@"\n`);
  await chmod(script, 0o755);
  return {
    command: script,
    args: [
      "--executablePath",
      CHROMIUM,
      "--headless",
      "--userDataDir",
      join(dir, "devtools-profile"),
      "--chromeArg=--no-sandbox",
      "--no-usage-statistics",
      "--no-performance-crux",
    ],
    environment: markedEnvironment(),
  };
}

/** desktop-commander (npx), no telemetry; it fetches its feature flags from `flagsUrl` (a loopback page, not the internet). */
export function desktopCommanderServer(flagsUrl: string): RawDefinition {
  return npxServer("@wonderwhy-er/desktop-commander", ["--no-onboarding"], {
    DESKTOP_COMMANDER_DISABLE_TELEMETRY: "1",
    DC_FLAG_URL: flagsUrl,
  });
}

/** @cyanheads/git-mcp-server (npx, stdio). */
export function gitServer(): RawDefinition {
  return npxServer("@cyanheads/git-mcp-server", [], { MCP_TRANSPORT_TYPE: "stdio", MCP_LOG_LEVEL: "error" });
}

/** @bytebase/dbhub (npx, stdio) on the SQLite file `file`. */
export function dbhubServer(file: string): RawDefinition {
  return npxServer("@bytebase/dbhub", ["--transport", "stdio", "--dsn", `sqlite://${file}`]);
}

/** One process of a server's tree. */
export interface TreeProcess {
  readonly pid: number;
  readonly ppid: number;
  /** Its start time (clock ticks after boot): with the pid, who it is (pids are reused). */
  readonly started: string;
  /** Its command line, arguments joined by spaces. */
  readonly command: string;
}

/** Every running process (Linux /proc); a zombie has ended and only waits for its parent to collect it. */
function runningProcesses(): TreeProcess[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        if (fields[0] === "Z" || fields[0] === "X") return [];
        const command = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ");
        return [{ pid: Number(pid), ppid: Number(fields[1]), started: fields[19]!, command }];
      } catch {
        return []; // exited meanwhile
      }
    });
}

function carriesMark(pid: number, needle: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`, "latin1").split("\0").includes(needle);
  } catch {
    return false;
  }
}

/**
 * The processes of one marked tree, as far as they have been seen: a process
 * belongs when its environment carries the mark, when its parent belongs (a
 * Chromium helper rewrites the memory /proc shows as its environment when it
 * sets its title), or when its command line names `mentions` (an orphaned
 * helper whose parent is gone: Chromium's name their profile folder).
 */
export class TreeWatch {
  readonly #needle: string;
  readonly #mentions: string | undefined;
  readonly #members = new Map<number, TreeProcess>();
  /** Processes known not to carry the mark (an environment is inherited at fork and kept across exec). */
  readonly #unmarked = new Set<string>();

  constructor(mark: string, mentions?: string) {
    this.#needle = `${TREE_MARK}=${mark}`;
    this.#mentions = mentions;
  }

  /** Looks at every running process once; returns the tree's members that run now. */
  look(): TreeProcess[] {
    const alive: TreeProcess[] = [];
    const pids = new Set<number>();
    const join = (entry: TreeProcess) => {
      this.#members.set(entry.pid, entry);
      pids.add(entry.pid);
      alive.push(entry);
    };
    const others: TreeProcess[] = [];
    for (const entry of runningProcesses()) {
      const known = this.#members.get(entry.pid);
      // A command line read before exec (empty) is replaced by the later one.
      if (known?.started === entry.started) join(entry.command ? entry : known);
      else if (this.#marked(entry)) join(entry);
      else others.push(entry);
    }
    for (let added = true; added; ) {
      added = false;
      for (const entry of others) {
        if (pids.has(entry.pid) || !pids.has(entry.ppid)) continue;
        join(entry);
        added = true;
      }
    }
    return alive;
  }

  #marked(entry: TreeProcess): boolean {
    if (this.#mentions !== undefined && entry.command.includes(this.#mentions)) return true;
    const key = `${entry.pid}:${entry.started}`;
    if (this.#unmarked.has(key)) return false;
    const marked = carriesMark(entry.pid, this.#needle);
    if (!marked) this.#unmarked.add(key);
    return marked;
  }

  /** Every member ever seen. */
  seen(): TreeProcess[] {
    return [...this.#members.values()];
  }

  /** SIGKILLs every member that still runs (a failed test's leftovers). */
  killLeft(): void {
    for (const { pid } of this.look()) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone meanwhile
      }
    }
  }
}

/**
 * Runs `run` while watching the tree marked `mark` (looked at every 20 ms:
 * nothing announces a fork); returns what `run` returned, every process of the
 * tree seen, and those that still ran when `run` had finished. Leftovers are killed.
 */
export async function watchTree<T>(
  mark: string,
  run: () => Promise<T>,
  mentions?: string,
): Promise<{ result: T; seen: TreeProcess[]; left: TreeProcess[] }> {
  const watch = new TreeWatch(mark, mentions);
  watching.add(watch);
  const timer = setInterval(() => watch.look(), 20);
  try {
    const result = await run();
    clearInterval(timer);
    return { result, left: watch.look(), seen: watch.seen() };
  } finally {
    clearInterval(timer);
    watch.killLeft();
    watching.delete(watch);
  }
}

const watching = new Set<TreeWatch>();

/** SIGKILLs what is left of every tree still watched: for an `afterEach`, since a test that timed out never reaches its own clean-up. */
export function killWatchedTrees(): void {
  for (const watch of watching) watch.killLeft();
  watching.clear();
}

/** A loopback web server with fixed pages, for the browser servers (and desktop-commander's feature flags). */
export interface LoopbackSite {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  stop(): Promise<void>;
}

export function startSite(pages: Record<string, { type: string; body: string }>): Promise<LoopbackSite> {
  const server: Server = createServer((request, response) => {
    const page = pages[new URL(request.url ?? "/", "http://127.0.0.1").pathname];
    if (!page) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { "content-type": page.type }).end(page.body);
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      if (typeof address !== "object" || !address) return reject(new Error("no address"));
      resolve({
        origin: `http://127.0.0.1:${address.port}`,
        stop: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

/** A bridge the test runs on a loopback port (the way a user runs one in a terminal), its whole tree marked. */
export interface RunningBridge {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  /** Its tree: the bridge and the servers it started. */
  readonly tree: TreeWatch;
  stop(): Promise<void>;
}

/** Whether something accepts TCP connections on 127.0.0.1:`port` now. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/**
 * Starts `command args(port)` on a free loopback port and resolves once the port
 * accepts connections (a bridge may say it starts before it listens). A bridge
 * that exits first (the port was taken meanwhile) is started again on another port.
 */
export async function startBridge(command: string, args: (port: number) => string[], timeoutMs = 30_000): Promise<RunningBridge> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const mark = randomUUID();
    const child = spawn(command, args(port), { env: { ...process.env, [TREE_MARK]: mark }, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4096));
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    let gone = false;
    void exited.then(() => (gone = true));
    const tree = new TreeWatch(mark);
    const stop = async () => {
      tree.killLeft();
      await exited;
    };
    const listening = await eventually(
      async () => (gone ? "exited" : (await accepts(port)) && "listening"),
      timeoutMs,
      () => `${command} did not listen on port ${port}:\n${output}`,
    ).catch(async (error: unknown) => {
      await stop();
      throw error;
    });
    if (listening === "listening") return { origin: `http://127.0.0.1:${port}`, tree, stop };
    if (attempt === 3) throw new Error(`${command} exited before it listened:\n${output}`);
  }
}
