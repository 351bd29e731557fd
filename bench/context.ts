/**
 * Context benchmark (npm run bench:context): what MCP tool definitions cost
 * the first model request, with real catalogs: the pinned third-party
 * servers as their users launch them (test/helpers/real-servers.ts: Playwright
 * MCP and Chrome DevTools MCP on Debian's Chromium, headless; desktop-commander;
 * the git server; dbhub on a SQLite file), the pinned reference servers
 * (filesystem, memory, sequential-thinking, postgres) and server-everything,
 * and a fixture of 20 servers of 40 tools each, under each exposure (`direct`,
 * `deferred`, `codemode`, and `auto`, the default, with its budget of 10% of
 * the model's context window); and how many model requests it takes until a
 * tool the model does not see directly is called, with a scripted model. The
 * bridges (mcp-remote, supergateway, mcp-proxy) are left out: they carry
 * another server's catalog (server-everything's in the tests), which would
 * count it twice. A server that does not connect is named in the output.
 *
 *   node --experimental-transform-types --no-warnings bench/context.ts
 *
 * Method: a real Pi 1.6 run (`pi -p "/mcp wait" "hi"`) with the faux model
 * provider (context window 128,000), which records the tool definitions of
 * every request exactly as the provider receives them (name, description,
 * JSON Schema parameters). Bytes: the UTF-8 length of their JSON; tokens:
 * bytes / 4. "MCP" counts only the `mcp__*` tools. Requests until the call:
 * the model requests made before the one that carries the tool's result
 * (1: the first request already calls it).
 */
import { randomUUID } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { loadavg } from "node:os";
import { join } from "node:path";
import { makePiHome, NODE, REPO_ROOT, runPi, type FauxLogEntry, type FauxStep } from "../test/e2e/harness/pi.ts";
import {
  dbhubServer,
  desktopCommanderServer,
  devtoolsServer,
  gitServer,
  playwrightServer,
  startSite,
  TREE_MARK,
  watchTree,
} from "../test/helpers/real-servers.ts";
import { packageServerPath } from "../test/helpers/servers.ts";

type Exposure = "direct" | "deferred" | "codemode" | "auto";
const EXPOSURES: readonly Exposure[] = ["direct", "deferred", "codemode", "auto"];
const EVERYTHING = join(REPO_ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const MANY = join(REPO_ROOT, "test/fixtures/servers/many-tools.mjs");
const GENERATED = 20;
const GENERATED_TOOLS = 40;

// desktop-commander fetches its feature flags at start: from here, not from the internet.
const site = await startSite({ "/flags": { type: "application/json", body: '{"flags":{}}' } });

/** What each configured server is, for the output. */
const THIRD_PARTY = {
  playwright: "Playwright MCP",
  devtools: "Chrome DevTools MCP",
  desktop: "desktop-commander",
  git: "git-mcp-server",
  dbhub: "dbhub (SQLite)",
  everything: "server-everything",
  filesystem: "filesystem",
  memory: "memory",
  thinking: "sequential-thinking",
  postgres: "postgres",
} as const;

async function servers(dir: string): Promise<Record<string, unknown>> {
  const generated = Object.fromEntries(
    Array.from({ length: GENERATED }, (_, index) => [
      `gen${String(index + 1).padStart(2, "0")}`,
      { command: NODE, args: [MANY], environment: { FIXTURE_TOOLS: String(GENERATED_TOOLS), FIXTURE_PAGE_SIZE: "40" } },
    ]),
  );
  const pinned = (pkg: string, ...args: string[]) => ({ command: NODE, args: [packageServerPath(pkg), ...args] });
  const named: Record<keyof typeof THIRD_PARTY, unknown> = {
    playwright: playwrightServer(dir),
    devtools: await devtoolsServer(dir),
    desktop: desktopCommanderServer(`${site.origin}/flags`),
    git: gitServer(),
    dbhub: dbhubServer(join(dir, "data.db")),
    everything: { command: NODE, args: [EVERYTHING, "stdio"] },
    filesystem: pinned("@modelcontextprotocol/server-filesystem", dir),
    memory: { ...pinned("@modelcontextprotocol/server-memory"), environment: { MEMORY_FILE_PATH: join(dir, "memory.jsonl") } },
    thinking: pinned("@modelcontextprotocol/server-sequential-thinking"),
    postgres: pinned("@modelcontextprotocol/server-postgres", "postgresql://127.0.0.1:1/none"),
  };
  return { ...named, ...generated };
}
const CONFIGURED = [
  ...Object.keys(THIRD_PARTY),
  ...Array.from({ length: GENERATED }, (_, index) => `gen${String(index + 1).padStart(2, "0")}`),
];

interface Run {
  readonly code: number | null;
  readonly requests: FauxLogEntry[];
  readonly stdout: string;
  readonly stderr: string;
}

async function run(exposure: Exposure, prompts: string[], script: FauxStep[]): Promise<Run> {
  const home = await makePiHome();
  try {
    const mcp = { connectTimeoutMs: 120_000, ...(exposure !== "auto" && { exposure }), servers: await servers(home.cwd) };
    await writeFile(join(home.agentDir, "settings.json"), JSON.stringify({ mcp }));
    // Every process of the servers' trees carries the mark: what Pi leaves behind (a Chromium) is killed.
    const mark = randomUUID();
    const { result } = await watchTree(
      mark,
      () =>
        runPi({
          home: home.home,
          cwd: home.cwd,
          extensions: [REPO_ROOT],
          args: ["-p", ...prompts],
          env: { [TREE_MARK]: mark },
          script,
          timeoutMs: 300_000,
        }),
      home.home,
    );
    return result;
  } finally {
    await home.cleanup();
  }
}

const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value), "utf8");
const isMcp = (name: string) => name.startsWith("mcp__");

/** The first request's tool definitions, and the servers `/mcp status` says are deferred (auto). */
async function measure(exposure: Exposure) {
  const result = await run(exposure, ["/mcp wait --timeout 120000", "/mcp status", "hi"], [{ text: "ok" }]);
  const request = result.requests[0];
  if (result.code !== 0 || !request) throw new Error(`pi exited ${result.code}: ${result.stderr.slice(-800)}`);
  const mcp = request.tools.filter((tool) => isMcp(tool.name));
  // `/mcp wait` and `/mcp status` print the same lines: each server counts once.
  const status = result.stdout;
  const deferred = [...new Set([...status.matchAll(/^(\S+): connected.*\n {2}context: auto: deferred/gm)].map((match) => match[1]!))];
  const connected = new Set([...status.matchAll(/^(\S+): connected/gm)].map((match) => match[1]!)).size;
  // A server that did not connect is named with what status says of it, never silently dropped.
  const missing = CONFIGURED.filter((name) => !new RegExp(`^${name}: connected`, "m").test(status)).map(
    (name) => status.match(new RegExp(`^${name}: .*(?:\\n {2}.*)*`, "m"))?.[0].replace(/\s*\n\s*/g, " ") ?? `${name}: not in /mcp status`,
  );
  return {
    exposure,
    connected,
    tools: request.tools.length,
    mcpTools: mcp.length,
    bytes: bytesOf(request.tools),
    mcpBytes: mcp.length > 0 ? bytesOf(mcp) : 0,
    deferred,
    missing,
  };
}

/** Requests until `tool` (mcp__server__tool) is called and its result reaches the model, with `script`. */
async function requestsUntilCalled(exposure: Exposure, tool: string, script: FauxStep[], expect: string) {
  const result = await run(exposure, ["/mcp wait --timeout 120000", "go"], script);
  if (result.code !== 0 || !result.stdout.includes(expect))
    throw new Error(`${exposure}: the call of ${tool} failed: ${result.stderr.slice(-800)}`);
  const index = result.requests.findIndex((request) =>
    request.messages.some((message) => message.role === "toolResult" && JSON.stringify(message).includes(expect)),
  );
  return index;
}

const started = new Date();
const load = loadavg()[0]!;
const measured = [];
for (const exposure of EXPOSURES) measured.push(await measure(exposure));
const auto = measured.find((row) => row.exposure === "auto")!;
const direct = measured.find((row) => row.exposure === "direct")!;
// A tool of a server the budget deferred: the first generated one, else server-everything's echo.
const deferredGenerated = auto.deferred.find((name) => name.startsWith("gen"));
const target: Call | undefined = deferredGenerated
  ? { tool: `mcp__${deferredGenerated}__t3`, query: "Tool number 3", args: {}, expect: "t3" }
  : undefined;
interface Call {
  readonly tool: string;
  readonly query: string;
  readonly args: Record<string, unknown>;
  readonly expect: string;
}
const echo: Call = { tool: "mcp__everything__echo", query: "echo", args: { message: "bench echo" }, expect: "Echo: bench echo" };
const searchScript = (call: Call): FauxStep[] => [
  { toolCall: { name: "tool_search", arguments: { query: call.query } } },
  { toolCall: { name: call.tool, arguments: call.args } },
  { textFromLastToolResult: true },
];
const calls = {
  direct: await requestsUntilCalled(
    "direct",
    echo.tool,
    [{ toolCall: { name: echo.tool, arguments: echo.args } }, { textFromLastToolResult: true }],
    echo.expect,
  ),
  deferred: await requestsUntilCalled("deferred", echo.tool, searchScript(echo), echo.expect),
  codemode: await requestsUntilCalled(
    "codemode",
    echo.tool,
    [
      { toolCall: { name: "codemode", arguments: { code: "return await tools.mcp__everything__echo({ message: 'bench echo' });" } } },
      { textFromLastToolResult: true },
    ],
    echo.expect,
  ),
  auto: auto.deferred.includes("everything")
    ? await requestsUntilCalled("auto", echo.tool, searchScript(echo), echo.expect)
    : target
      ? await requestsUntilCalled("auto", target.tool, searchScript(target), target.expect)
      : undefined,
};

const number = (value: number) => value.toLocaleString("en-US");
const table = [
  `| exposure | tools declared | MCP tools declared | bytes of tool definitions | ≈ tokens (bytes/4) | of which MCP (≈ tokens) | servers deferred | requests until a tool not declared is called |`,
  "| --- | --- | --- | --- | --- | --- | --- | --- |",
  ...measured.map((row) => {
    const deferredServers =
      row.exposure === "auto" ? `${row.deferred.length} of ${row.connected}` : row.exposure === "deferred" ? "all" : "none";
    const requests = calls[row.exposure];
    return `| ${row.exposure}${row.exposure === "auto" ? " (default)" : ""} | ${row.tools} | ${row.mcpTools} | ${number(row.bytes)} | ${number(Math.round(row.bytes / 4))} | ${number(Math.round(row.mcpBytes / 4))} | ${deferredServers} | ${requests ?? "–"} |`;
  }),
];
const missing = [...new Set(measured.flatMap((row) => row.missing.map((line) => `${row.exposure}: ${line}`)))];
const summary = [
  "",
  `Measured ${started.toISOString().slice(0, 16).replace("T", " ")} UTC at load average ${load.toFixed(1)}: ${auto.connected} of ${CONFIGURED.length} servers connected (${Object.values(THIRD_PARTY).join(", ")}, and ${GENERATED} generated servers of ${GENERATED_TOOLS} tools), Pi 1.6, faux model with a 128,000-token context window (auto's budget: 12,800 tokens). The bridges are left out: they carry another server's catalog.`,
  missing.length > 0 ? `Not connected, so not measured: ${missing.join("; ")}.` : "Every configured server connected in every run.",
  `auto deferred ${auto.deferred.join(", ") || "nothing"}; its MCP tool definitions come to ≈${number(Math.round(auto.mcpBytes / 4))} tokens against direct's ≈${number(Math.round(direct.mcpBytes / 4))} (${((1 - auto.mcpBytes / direct.mcpBytes) * 100).toFixed(1)}% fewer bytes).`,
  "Requests until the call: direct calls in its first request; deferred and auto search first (tool_search), then call; codemode calls from its first script.",
];
console.log([...table, ...summary].join("\n"));
await writeFile(join(REPO_ROOT, "bench", "CONTEXT.md"), `# Context benchmark\n\n${[...table, ...summary].join("\n")}\n`);
await site.stop();
