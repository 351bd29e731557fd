// The most used real servers and bridges, pinned in package.json, launched the
// way their users launch them: `npx -y <package>@<version>` (npm, a shell,
// then the server), or the user's own shell script that does not `exec`; the
// HTTP bridges (mcp-proxy, supergateway) run by the test on a loopback port,
// as a user runs one in a terminal. For each: `pi-mcp test <server> --json`
// connects, a real Pi's model (faux) calls a real tool and gets its real
// answer, and once Pi and `pi-mcp test` have exited no process of the
// server's tree is left (a browser server's tree holds a headless Chromium, a
// dozen processes). One Chromium start per browser server: its calls share it.
import { randomUUID } from "node:crypto";
import { execFileSync } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { RawDefinition } from "../helpers/host.ts";
import {
  TREE_MARK,
  dbhubServer,
  desktopCommanderServer,
  devtoolsServer,
  gitServer,
  killWatchedTrees,
  npxServer,
  playwrightServer,
  startBridge,
  startSite,
  type RunningBridge,
  watchTree,
  type LoopbackSite,
  type TreeProcess,
} from "../helpers/real-servers.ts";
import { everythingPath, nodePath, startEverything, type RunningServer } from "../helpers/servers.ts";
import { CLI_BIN, nodeBinary, projectPath, runProcess } from "../helpers/tmp.ts";
import { REPO_ROOT, runPi, usePiHome, type FauxStep } from "./harness/pi.ts";

const home = usePiHome();

// A test's bound: `pi-mcp test` and a Pi run, each starting the server (and npm) on a busy machine.
vi.setConfig({ testTimeout: 240_000 });

/** The text of the loopback page the browser servers visit. */
const PAGE_TEXT = "Hello from the loopback page";

let site: LoopbackSite;
/** server-everything over Streamable HTTP, for the bridges that reach a remote server. */
let everything: RunningServer;
beforeAll(async () => {
  everything = await startEverything("streamableHttp");
  site = await startSite({
    "/page": { type: "text/html", body: `<!doctype html><title>Loopback</title><h1>${PAGE_TEXT}</h1>` },
    // desktop-commander fetches its feature flags at start: from here, not from the internet.
    "/flags": { type: "application/json", body: '{"flags":{}}' },
  });
}, 180_000);
afterEach(killWatchedTrees);
afterAll(async () => {
  await Promise.all([site?.stop(), everything?.stop()]);
});

type ToolCall = { name: string; arguments: Record<string, unknown> };

/** A real server as a test sees it. */
interface RealServer {
  /** Its settings.json definition (in the current test's home). */
  definition(): Promise<RawDefinition>;
  /** The tools the model calls, in order: it calls `mcp__<server>__<name>`. */
  readonly calls: readonly ToolCall[];
  /** What the last call's result says (and the model repeats). */
  readonly says: string;
  /** Processes the tree must have had while Pi ran (beside the launcher): e.g. Chromium's. */
  readonly runs?: RegExp;
}

interface Tested {
  readonly name: string;
  readonly ok: boolean;
  readonly error: string | null;
  readonly tools: number;
}

/**
 * Runs `run` with a fresh tree mark in its environment; returns what it returned, every process of the
 * tree seen, and those left when it had finished (a process that names the test's home counts as one).
 */
function marked<T>(run: (env: Record<string, string>) => Promise<T>): Promise<{ result: T; seen: TreeProcess[]; left: TreeProcess[] }> {
  const mark = randomUUID();
  return watchTree(mark, () => run({ [TREE_MARK]: mark }), home.home);
}

const describeTree = (processes: readonly TreeProcess[]) =>
  processes.map((process) => `${process.pid} (parent ${process.ppid}): ${process.command.slice(0, 160)}`).join("\n");

/** `pi-mcp test <name> --json` (the built program) and a real Pi's model calling the server's tools; each leaves no process behind. */
async function proveServer(name: string, server: RealServer): Promise<void> {
  // Direct: the model here calls the server's tools by name; the context budget would defer a large catalog (test/e2e/context-budget.test.ts).
  await home.writeSettings({
    mcp: { connectTimeoutMs: 60_000, servers: { [name]: { ...(await server.definition()), exposure: "direct" } } },
  });

  const tested = await marked((env) =>
    runProcess(nodeBinary(), [CLI_BIN, "test", name, "--json"], {
      cwd: home.cwd,
      env: { PATH: projectPath(), HOME: home.home, PI_CODING_AGENT_DIR: home.agentDir, ...env },
      timeoutMs: 120_000,
    }),
  );
  expect(tested.result.code, tested.result.stdout + tested.result.stderr).toBe(0);
  const [report] = (JSON.parse(tested.result.stdout) as { servers: Tested[] }).servers;
  expect(report).toMatchObject({ name, ok: true, error: null });
  expect(report!.tools).toBeGreaterThan(0);
  expect(tested.seen, "pi-mcp test started the server").not.toEqual([]);
  expect(describeTree(tested.left), "left by pi-mcp test").toBe("");

  const script: FauxStep[] = [
    ...server.calls.map((call) => ({ toolCall: { name: `mcp__${name}__${call.name}`, arguments: call.arguments } })),
    { textFromLastToolResult: true, prefix: "model saw: " },
  ];
  const pi = await marked((env) =>
    runPi({
      home: home.home,
      cwd: home.cwd,
      extensions: [REPO_ROOT],
      args: ["-p", "/mcp wait --timeout 60000", `use ${name}`],
      env,
      script,
      timeoutMs: 150_000,
    }),
  );
  const run = pi.result;
  expect(run.timedOut, run.stderr).toBe(false);
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout).toMatch(new RegExp(`^${name}: connected`, "m"));
  const results = server.calls.map((call, index) => {
    const result = run.requests[index + 1]?.messages.at(-1) as {
      role: string;
      toolName: string;
      isError?: boolean;
      content: { text?: string }[];
    };
    expect(result, call.name).toMatchObject({ role: "toolResult", toolName: `mcp__${name}__${call.name}` });
    const text = result.content.map((item) => item.text ?? "").join("\n");
    expect(result.isError, `${call.name}: ${text.slice(0, 500)}`).toBeFalsy();
    return text;
  });
  expect(results.at(-1)).toContain(server.says);
  expect(run.stdout).toContain(`model saw: `);
  if (server.runs) expect(describeTree(pi.seen)).toMatch(server.runs);
  expect(describeTree(pi.left), `left by Pi; the tree was:\n${describeTree(pi.seen)}`).toBe("");
}

describe("browser servers (Debian's Chromium, headless)", () => {
  it("Playwright MCP (npx): navigates to a loopback page and its snapshot holds the page's text", async () => {
    await proveServer("playwright", {
      definition: async () => playwrightServer(home.home),
      calls: [
        { name: "browser_navigate", arguments: { url: `${site.origin}/page` } },
        { name: "browser_snapshot", arguments: {} },
      ],
      says: PAGE_TEXT,
      runs: /chromium/,
    });
  });

  it("Chrome DevTools MCP (the user's shell script, no exec): navigates to a loopback page and its snapshot holds the page's text", async () => {
    await proveServer("devtools", {
      definition: () => devtoolsServer(home.home),
      calls: [
        { name: "navigate_page", arguments: { type: "url", url: `${site.origin}/page`, pageId: 1 } },
        { name: "take_snapshot", arguments: { pageId: 1 } },
      ],
      says: PAGE_TEXT,
      runs: /chromium/,
    });
  });
});

describe("local servers", () => {
  it("desktop-commander (npx): starts a command that keeps running and answers with its first output; the command ends with Pi", async () => {
    await proveServer("desktop", {
      definition: async () => desktopCommanderServer(`${site.origin}/flags`),
      // What users start through it: a command that keeps running (a dev server, a watcher). It answers
      // with what the command printed within timeout_ms and leaves it running.
      calls: [{ name: "start_process", arguments: { command: "echo desktop-commander ran $((6 * 7)); sleep 600", timeout_ms: 3_000 } }],
      says: "desktop-commander ran 42",
      runs: /sleep 600/,
    });
  });

  it("git server (npx, stdio): reads the log of a repository", async () => {
    await proveServer("git", {
      definition: async () => {
        const repository = join(home.home, "repository");
        await mkdir(repository);
        const git = (...args: string[]) =>
          execFileSync("git", ["-c", "user.name=Pi", "-c", "user.email=pi@example.invalid", ...args], {
            cwd: repository,
            stdio: "ignore",
          });
        git("init", "-q");
        await writeFile(join(repository, "README"), "a repository\n");
        git("add", "README");
        git("commit", "-q", "-m", "The first commit of the test repository");
        return gitServer();
      },
      calls: [{ name: "git_log", arguments: { path: join(home.home, "repository") } }],
      says: "The first commit of the test repository",
    });
  });

  it("dbhub (npx, a SQLite file): creates a table, then reads it back", async () => {
    await proveServer("dbhub", {
      definition: async () => dbhubServer(join(home.home, "data.db")),
      calls: [
        {
          name: "execute_sql",
          arguments: { sql: "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO items VALUES (1, 'first item')" },
        },
        { name: "execute_sql", arguments: { sql: "SELECT name FROM items" } },
      ],
      says: "first item",
    });
  });
});

describe("bridges", () => {
  it("mcp-remote (npx): a local stdio bridge to a loopback Streamable HTTP server", async () => {
    await proveServer("remote", {
      definition: async () => npxServer("mcp-remote", [everything.url]),
      calls: [{ name: "echo", arguments: { message: "through mcp-remote" } }],
      says: "Echo: through mcp-remote",
    });
  });

  it("supergateway --streamableHttp (npx): a local stdio bridge to a loopback Streamable HTTP server", async () => {
    await proveServer("gateway", {
      definition: async () => npxServer("supergateway", ["--streamableHttp", everything.url, "--logLevel", "none"]),
      calls: [{ name: "echo", arguments: { message: "through supergateway" } }],
      says: "Echo: through supergateway",
    });
  });

  describe("a stdio server behind a bridge on a loopback port", () => {
    const stdioEverything = `${nodePath()} ${everythingPath()} stdio`;
    let bridge: RunningBridge | undefined;
    afterEach(async () => {
      await bridge?.stop();
      bridge = undefined;
    });

    it("mcp-proxy: Streamable HTTP", async () => {
      bridge = await startBridge(join(REPO_ROOT, "node_modules/.bin/mcp-proxy"), (port) => [
        "--port",
        String(port),
        "--host",
        "127.0.0.1",
        "--",
        nodePath(),
        everythingPath(),
        "stdio",
      ]);
      const url = `${bridge.origin}/mcp`;
      await proveServer("proxy", {
        definition: async () => ({ url }),
        calls: [{ name: "echo", arguments: { message: "through mcp-proxy" } }],
        says: "Echo: through mcp-proxy",
      });
    });

    it("supergateway --stdio: SSE", async () => {
      bridge = await startBridge(join(REPO_ROOT, "node_modules/.bin/supergateway"), (port) => [
        "--stdio",
        stdioEverything,
        "--port",
        String(port),
        "--logLevel",
        "none",
      ]);
      const url = `${bridge.origin}/sse`;
      await proveServer("gateway", {
        definition: async () => ({ url, transport: "sse" }),
        calls: [{ name: "echo", arguments: { message: "through supergateway" } }],
        says: "Echo: through supergateway",
      });
    });
  });
});
