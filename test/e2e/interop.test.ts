// Real MCP servers from npm that nobody here wrote, as a new user would run
// them: each through the built `pi-mcp test` binary, then all of them in one
// real Pi (faux model) whose model calls one tool of each. The filesystem
// server is configured for another folder (it needs `roots`), server-postgres
// runs against a real PostgreSQL (its templates/list is -32601), the MCP Apps
// example keeps its app-only tool from the model, server-everything runs over
// stdio, Streamable HTTP and SSE, and a fastmcp server shows the roots Pi gave.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { packageServer } from "../helpers/host.ts";
import { startPostgres, type RunningPostgres } from "../helpers/postgres.ts";
import { fixturePath, nodePath, startEverything, type RunningServer } from "../helpers/servers.ts";
import { CLI_BIN, projectPath, runProcess } from "../helpers/tmp.ts";
import { REPO_ROOT, runPi, usePiHome, type FauxStep } from "./harness/pi.ts";

const home = usePiHome();

let postgres: RunningPostgres;
let http: RunningServer;
let sse: RunningServer;
beforeAll(async () => {
  if (!existsSync(CLI_BIN))
    execFileSync("unbuild", [], { cwd: REPO_ROOT, env: { ...process.env, PATH: projectPath() }, stdio: "ignore", timeout: 120_000 });
  [postgres, http, sse] = await Promise.all([startPostgres(), startEverything("streamableHttp"), startEverything("sse")]);
  await postgres.sql("CREATE TABLE items (id integer PRIMARY KEY, name text); INSERT INTO items VALUES (1, 'first item')");
}, 90_000);
afterAll(async () => {
  await Promise.all([postgres?.stop(), http?.stop(), sse?.stop()]);
});

/** Every server of the scene: `pi-mcp test` counts, and the one tool call the model makes (with what its result must say). */
function scene(served: string) {
  const everything = packageServer("@modelcontextprotocol/server-everything", ["stdio"]);
  return {
    filesystem: {
      definition: packageServer("@modelcontextprotocol/server-filesystem", [served], { roots: [served] }),
      counts: { resources: 0, resourceTemplates: 0, prompts: 0 },
      call: { name: "mcp__filesystem__read_text_file", arguments: { path: join(served, "note.txt") } },
      says: "a note in the served folder",
    },
    memory: {
      definition: packageServer("@modelcontextprotocol/server-memory", [], {
        environment: { MEMORY_FILE_PATH: join(served, "memory.jsonl") },
      }),
      counts: { resourceTemplates: 0, prompts: 0 },
      call: {
        name: "mcp__memory__create_entities",
        arguments: { entities: [{ name: "pi-mcp", entityType: "project", observations: ["speaks MCP"] }] },
      },
      says: '"name": "pi-mcp"',
    },
    thinking: {
      definition: packageServer("@modelcontextprotocol/server-sequential-thinking"),
      counts: { tools: 1, resources: 0, resourceTemplates: 0, prompts: 0 },
      call: {
        name: "mcp__thinking__sequentialthinking",
        arguments: { thought: "one step is enough", thoughtNumber: 1, totalThoughts: 1, nextThoughtNeeded: false },
      },
      says: '"thoughtNumber": 1',
    },
    postgres: {
      definition: packageServer("@modelcontextprotocol/server-postgres", [postgres.url]),
      counts: { tools: 1, resources: 1, resourceTemplates: 0, prompts: 0 },
      call: { name: "mcp__postgres__query", arguments: { sql: "SELECT name FROM items" } },
      says: '"name": "first item"',
    },
    apps: {
      definition: packageServer("@modelcontextprotocol/server-system-monitor", ["--stdio"]),
      counts: { tools: 1, resources: 1 },
      call: { name: "mcp__apps__get-system-info", arguments: {} },
      says: "hostname",
    },
    fastmcp: {
      definition: { command: nodePath(), args: [fixturePath("fastmcp")] },
      counts: { tools: 2, resources: 1, resourceTemplates: 1, prompts: 1 },
      call: { name: "mcp__fastmcp__add", arguments: { a: 2, b: 3 } },
      says: "5",
    },
    everything: {
      definition: everything,
      counts: { resources: 7, resourceTemplates: 2, prompts: 4 },
      call: { name: "mcp__everything__echo", arguments: { message: "over stdio" } },
      says: "Echo: over stdio",
    },
    "everything-http": {
      definition: { url: http.url },
      counts: { resourceTemplates: 2, prompts: 4 },
      call: { name: "mcp__everything-http__echo", arguments: { message: "over Streamable HTTP" } },
      says: "Echo: over Streamable HTTP",
    },
    "everything-sse": {
      definition: { url: sse.url, transport: "sse" },
      counts: { resourceTemplates: 2, prompts: 4 },
      call: { name: "mcp__everything-sse__echo", arguments: { message: "over SSE" } },
      says: "Echo: over SSE",
    },
  };
}

interface Tested {
  readonly name: string;
  readonly ok: boolean;
  readonly error: string | null;
  readonly tools: number;
  readonly resources: number;
  readonly resourceTemplates: number;
  readonly prompts: number;
}

it("every real server passes pi-mcp test, and a real Pi's model calls a tool of each and gets its answer", async () => {
  const served = join(home.home, "served-elsewhere");
  await mkdir(served);
  await writeFile(join(served, "note.txt"), "a note in the served folder");
  const servers = scene(served);
  await home.writeSettings({
    mcp: {
      connectTimeoutMs: 30_000,
      servers: Object.fromEntries(Object.entries(servers).map(([name, server]) => [name, server.definition])),
    },
  });

  // pi-mcp test, the built program, as a person would run it.
  const env = { PATH: projectPath(), HOME: home.home, PI_CODING_AGENT_DIR: home.agentDir };
  const test = await runProcess(nodePath(), [CLI_BIN, "test", "--all", "--json"], { cwd: home.cwd, env, timeoutMs: 120_000 });
  const tested = new Map((JSON.parse(test.stdout) as { servers: Tested[] }).servers.map((server) => [server.name, server]));
  expect(test.code, test.stdout).toBe(0);
  for (const [name, server] of Object.entries(servers)) {
    expect(tested.get(name), name).toMatchObject({ ok: true, error: null, ...server.counts });
  }

  // One real Pi: the model calls one tool of every server, in turn, then repeats the last answer.
  const script: FauxStep[] = [
    ...Object.values(servers).map((server) => ({ toolCall: server.call })),
    { toolCall: { name: "mcp__fastmcp__roots", arguments: {} } },
    { textFromLastToolResult: true, prefix: "roots: " },
  ];
  const run = await runPi({
    home: home.home,
    cwd: home.cwd,
    extensions: [REPO_ROOT],
    args: ["-p", "/mcp wait --timeout 60000", "use every server once"],
    script,
    timeoutMs: 150_000,
  });
  expect(run.code, run.stderr).toBe(0);
  for (const name of Object.keys(servers))
    expect(run.stdout).toMatch(new RegExp(`^${name}: connected, ${tested.get(name)!.tools} tools`, "m"));
  const offered = run.requests[0]!.toolNames;
  expect(offered).toContain("mcp__apps__get-system-info");
  expect(offered).not.toContain("mcp__apps__poll-system-stats");
  Object.values(servers).forEach((server, index) => {
    const result = run.requests[index + 1]!.messages.at(-1) as {
      role: string;
      toolName: string;
      isError?: boolean;
      content: { type: string; text?: string }[];
    };
    expect(result, server.call.name).toMatchObject({ role: "toolResult", toolName: server.call.name });
    expect(result.isError, server.call.name).toBeFalsy();
    expect(result.content.map((item) => item.text ?? "").join("\n"), server.call.name).toContain(server.says);
  });
  // Without a roots setting a server gets Pi's working folder: fastmcp asked, and says what it got.
  expect(run.stdout).toContain(`roots: ${pathToFileURL(home.cwd).href}`);
  expect(await readFile(join(served, "memory.jsonl"), "utf8")).toContain("pi-mcp");
}, 300_000);
