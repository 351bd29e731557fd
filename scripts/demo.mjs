// The README's demo: configures server-everything (a devDependency) with the
// pi-mcp CLI, tests it, then runs a real Pi whose offline scripted model
// calls two MCP tools. No network, no API key.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..");
const node = process.execPath;
const home = mkdtempSync(join(tmpdir(), "pi-mcp-demo-"));
const agentDir = join(home, ".pi", "agent");
const project = join(home, "project");
mkdirSync(project, { recursive: true });
const env = {
  PATH: process.env.PATH,
  HOME: home,
  PI_CODING_AGENT_DIR: agentDir,
  PI_OFFLINE: "1",
  PI_SKIP_VERSION_CHECK: "1",
  PI_TELEMETRY: "0",
};

function run(title, command, args, extraEnv = {}) {
  console.log(`\n$ ${title}`);
  const started = Date.now();
  const result = spawnSync(command, args, {
    cwd: project,
    env: { ...env, ...extraEnv },
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 120_000,
  });
  process.stdout.write(result.stdout);
  const errors = result.stderr.split("\n").filter((line) => line.trim() && !/^Warning: |^\s+\/.*\.md$|builtin/.test(line));
  if (errors.length > 0) process.stdout.write(`${errors.join("\n")}\n`);
  if (process.env.PI_MCP_DEMO_TIMING) console.log(`(${Date.now() - started} ms)`);
  if (result.status !== 0) throw new Error(`${title} exited ${result.status}`);
}

const cli = join(root, "dist", "cli", "index.mjs");
const everything = join(root, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");
const script = join(home, "model-script.json");
writeFileSync(
  script,
  JSON.stringify([
    { toolCall: { name: "mcp__everything__echo", arguments: { message: "Hello from an MCP server" } } },
    { toolCall: { name: "mcp__everything__get-sum", arguments: { a: 20, b: 22 } } },
    { textFromLastToolResult: true, prefix: "The MCP tools answered. Last result: " },
  ]),
);

try {
  run("pi-mcp add everything -- node server-everything stdio", node, [cli, "add", "everything", "--", node, everything, "stdio"]);
  run("pi-mcp list", node, [cli, "list"]);
  run("pi-mcp test everything", node, [cli, "test", "everything"]);
  run(
    'pi -p "/mcp wait" "/mcp status" "Use the everything tools"   (offline scripted model)',
    node,
    [
      join(root, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "cli.js"),
      "--no-session",
      "-e",
      root,
      "-e",
      join(root, "test", "e2e", "harness", "faux-provider.ts"),
      "--provider",
      "faux",
      "--model",
      "faux-1",
      "-p",
      "/mcp wait",
      "/mcp status",
      "Use the everything tools",
    ],
    { PI_MCP_FAUX_SCRIPT: script },
  );
} finally {
  rmSync(home, { recursive: true, force: true });
}
