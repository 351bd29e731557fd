/**
 * `list` and `get` never connect (README: "Never connects."): the built
 * program, as real processes, shows a local server whose program would leave
 * a mark the moment it started and remote servers on a loopback listener that
 * counts every TCP connection, and neither ever happens; `/mcp list` and
 * `/mcp get` (the shared core on the Pi surface) neither.
 */
import { existsSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { runCommandLine, type CommandEnvironment } from "../../src/commands/index.ts";
import { surfaceCommands } from "../../src/composition.ts";
import { loadConfig } from "../../src/config/load.ts";
import { CLI_BIN, nodeBinary, noKernel, runProcess, useSandbox, type Sandbox } from "../helpers/tmp.ts";

const sandbox = useSandbox();
let listener: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (listener ? listener.close(() => resolve()) : resolve())));

/** A loopback HTTP listener that counts every connection made to it. */
async function countingListener(): Promise<{ url: string; connections(): number }> {
  let connections = 0;
  const server = createServer((_request, response) => response.writeHead(500).end());
  server.on("connection", () => connections++);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  listener = server;
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, connections: () => connections };
}

/** Settings with a local server that marks its start, and remote servers (plain, bearer, OAuth, SSE) on the listener. */
async function settings(box: Sandbox, url: string): Promise<string> {
  const mark = join(box.root, "started");
  await box.writeJson(box.globalSettings, {
    mcp: {
      servers: {
        local: { command: nodeBinary(), args: ["-e", `require("node:fs").writeFileSync(${JSON.stringify(mark)}, "")`] },
        plain: { url },
        bearer: { url, auth: { type: "bearer", token: "t0ken" } },
        oauth: { url, auth: { type: "oauth" } },
        legacy: { url, transport: "sse" },
      },
    },
  });
  return mark;
}

/** Every server once by get (the JSON document is drawn from the same details: one suffices), and list both ways. */
const COMMAND_LINES = [
  ["list"],
  ["list", "--json"],
  ...["local", "plain", "bearer", "oauth", "legacy"].map((name) => ["get", name]),
  ["get", "oauth", "--json"],
];

it("pi-mcp list and pi-mcp get start no server program and open no connection", async () => {
  const box = sandbox();
  const remote = await countingListener();
  const mark = await settings(box, remote.url);
  for (const argv of COMMAND_LINES) {
    const result = await runProcess(nodeBinary(), [CLI_BIN, ...argv], { cwd: box.projectDir, env: box.env() });
    expect(result.code, `${argv.join(" ")}: ${result.stderr}`).toBe(0);
  }
  expect(existsSync(mark)).toBe(false);
  expect(remote.connections()).toBe(0);
}, 180_000); // eight runs of the program, one after the other, on a busy machine

it("/mcp list and /mcp get start no server program and open no connection", async () => {
  const box = sandbox();
  const remote = await countingListener();
  const mark = await settings(box, remote.url);
  const env = box.env();
  const config = await loadConfig({ agentDir: box.agentDir, cwd: box.projectDir, projectTrusted: false, env });
  const pi: CommandEnvironment = {
    surface: "pi",
    agentDir: box.agentDir,
    cwd: box.projectDir,
    env,
    projectTrusted: false,
    savedTrust: null,
    credentials: { has: async () => false, remove: async () => false },
    createKernel: noKernel,
    loadConfig: async () => config,
    // A session whose servers are all still connecting: /mcp get shows that state, it does not connect.
    runtime: {
      status: async () => ({
        config,
        servers: config.servers.map((entry) => ({ name: entry.name, state: "connecting" as const })) as never,
      }),
      reconnect: () => Promise.reject(new Error("list and get never reconnect")),
      host: () => Promise.reject(new Error("list and get never ask for the host")),
      settled: async () => true,
      settingsChanged: () => Promise.reject(new Error("list and get change nothing")),
    },
  };
  for (const argv of COMMAND_LINES.filter((line) => !line.includes("--json"))) {
    const result = await runCommandLine(surfaceCommands("pi"), argv, pi);
    expect(result.exitCode, `${argv.join(" ")}: ${result.output}`).toBe(0);
  }
  expect(existsSync(mark)).toBe(false);
  expect(remote.connections()).toBe(0);
});
