// The `test` command's core (testCommand via runCommandLine) with the real
// kernel from src/composition.ts, against real servers.
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { commandsFor, runCommandLine } from "../../src/commands/index.ts";
import { cliCommandEnvironment } from "../../src/commands/environment.ts";
import type { TestedServer } from "../../src/commands/runtime.ts";
import { createKernel, runtimeCommands, type KernelOptions } from "../../src/composition.ts";
import type { KernelPlugin } from "../../src/kernel/kernel.ts";
import { childServers, everythingStdio, fixtureServer, startHost, stopAllHosts, textOf } from "../helpers/host.ts";
import { nodePath } from "../helpers/servers.ts";

const SECRET = "s3cr3t-Value-9f27c1";
// CSI, OSC, C1 and other C0 controls; tab and newline are allowed.
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

let root: string;
beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "pi-mcp-runtime-")));
  await mkdir(join(root, "agent"));
  await mkdir(join(root, "project"));
});
afterEach(async () => {
  await stopAllHosts();
  await rm(root, { recursive: true, force: true });
});

async function runTest(argv: string[], servers: Record<string, unknown>, kernelOptions: KernelOptions = {}) {
  await writeFile(
    join(root, "agent", "settings.json"),
    JSON.stringify({ mcp: { connectTimeoutMs: 8_000, requestTimeoutMs: 8_000, retry: { maxRetries: 2, initialDelayMs: 50 }, servers } }),
  );
  const env = { PATH: process.env.PATH ?? "", HOME: root, PI_CODING_AGENT_DIR: join(root, "agent"), PI_MCP_TEST_SECRET: SECRET };
  const environment = cliCommandEnvironment(join(root, "project"), env, async () => createKernel(kernelOptions));
  const result = await runCommandLine(commandsFor("cli", runtimeCommands()), argv, environment);
  return { ...result, servers: ((result.json ?? { servers: [] }) as { servers: TestedServer[] }).servers };
}

it("reports server-everything: ok, protocol version, server info, catalog counts and connect time", async () => {
  const result = await runTest(["test", "everything", "--json"], { everything: everythingStdio() });
  expect(result.exitCode).toBe(0);
  expect(result.servers).toHaveLength(1);
  const tested = result.servers[0]!;
  expect(tested).toMatchObject({ name: "everything", ok: true, error: null });
  expect(tested.protocolVersion).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  expect(tested.serverInfo?.name).toContain("everything");
  expect(tested.tools).toBeGreaterThanOrEqual(12);
  expect(tested.resources).toBeGreaterThan(0);
  expect(tested.resourceTemplates).toBeGreaterThan(0);
  expect(tested.prompts).toBeGreaterThan(0);
  expect(tested.connectMs).toBeGreaterThan(0);
  expect(tested.connectMs).toBeLessThan(15_000);
  // The JSON document is plain data: it survives a round trip unchanged.
  expect(JSON.parse(JSON.stringify(result.json))).toEqual(result.json);
  expect(result.output).toContain("✓ everything");
});

it("fires the host's lifecycle hooks as Pi does: hostStart before any server connects, hostShutdown once they closed", async () => {
  const seen: string[] = [];
  const recorder: KernelPlugin = {
    name: "test-lifecycle",
    apply(kernel) {
      kernel.hooks.hostStart.tap("test-lifecycle", (host) => void seen.push(`hostStart ${host.server("everything")?.state}`));
      kernel.hooks.serverConnected.tap("test-lifecycle", (connection) => void seen.push(`serverConnected ${connection.server.name}`));
      kernel.hooks.hostShutdown.tapPromise(
        "test-lifecycle",
        async (host) =>
          void seen.push(
            `hostShutdown ${host
              .status()
              .map((status) => status.state)
              .join(",")}`,
          ),
      );
    },
  };
  const result = await runTest(["test", "everything", "--json"], { everything: everythingStdio() }, { plugins: [recorder] });
  expect(result.exitCode).toBe(0);
  expect(seen).toEqual(["hostStart undefined", "serverConnected everything", "hostShutdown disabled"]);
});

it("declares what Pi declares: server-everything offers test as many tools as a Pi host with a model (sampling included)", async () => {
  const result = await runTest(["test", "everything", "--json"], { everything: everythingStdio() });
  const model = { complete: () => Promise.reject(new Error("no model in this test")) };
  const pi = await startHost({ everything: everythingStdio() }, { services: { model } });
  await pi.waitForState("everything", "connected");
  await pi.host.flushTools();
  const inPi = [...pi.sink.active].filter((name) => name.startsWith("mcp__everything__"));
  await pi.stop();
  expect(inPi).toContain("mcp__everything__trigger-sampling-request");
  expect(result.servers[0]).toMatchObject({ ok: true, tools: inPi.length });
});

it("reports a failing server as ok:false with a clean error and exit code 1, never showing a secret", async () => {
  const result = await runTest(["test", "--all", "--json"], {
    // The secret is in the command itself, so the spawn error would carry it verbatim.
    spawnFails: {
      command: "/nonexistent/\u001b[31mred\u001b]0;title\u0007\u009b1m-${PI_MCP_TEST_SECRET}/server",
      args: ["--token", "${PI_MCP_TEST_SECRET}"],
    },
    // The secret is in the arguments of a process that exits at once.
    exitsAtOnce: { command: nodePath(), args: ["-e", "process.exit(3)", "--", "--token=${PI_MCP_TEST_SECRET}"] },
  });
  expect(result.exitCode).toBe(1);
  expect(result.servers.map((server) => server.name).sort()).toEqual(["exitsAtOnce", "spawnFails"]);
  for (const server of result.servers) {
    expect(server.ok).toBe(false);
    expect(typeof server.error).toBe("string");
    expect(server.error!.length).toBeGreaterThan(0);
    expect(server.error).not.toMatch(CONTROLS);
    expect(server.error).not.toContain(SECRET);
    expect(server).toMatchObject({ protocolVersion: null, serverInfo: null, tools: 0 });
  }
  expect(result.servers.find((server) => server.name === "spawnFails")!.error).toMatch(/ENOENT/);
  expect(JSON.stringify(result.json)).not.toContain(SECRET);
  expect(result.output).not.toContain(SECRET);
  expect(result.output).not.toMatch(CONTROLS);
  expect(childServers()).toEqual([]);
});

it("tests a working and a failing server together: exit code 1, each reported on its own", async () => {
  const result = await runTest(["test", "--all", "--json"], {
    everything: everythingStdio(),
    broken: { command: "/nonexistent/server-${PI_MCP_TEST_SECRET}" },
  });
  expect(result.exitCode).toBe(1);
  const byName = Object.fromEntries(result.servers.map((server) => [server.name, server]));
  expect(byName.everything?.ok).toBe(true);
  expect(byName.broken?.ok).toBe(false);
  expect(byName.broken?.error).not.toContain(SECRET);
  expect(childServers()).toEqual([]);
});

it("reports a server masked by the project settings as not testable instead of failing", async () => {
  await mkdir(join(root, "project", ".pi"), { recursive: true });
  await writeFile(join(root, "project", ".pi", "settings.json"), JSON.stringify({ mcp: { servers: { everything: null } } }));
  const result = await runTest(["test", "everything", "-a", "--json"], { everything: everythingStdio() });
  expect(result.exitCode).toBe(1);
  expect(result.servers).toEqual([
    expect.objectContaining({ name: "everything", ok: false, error: expect.stringMatching(/^masked by the project settings/) }),
  ]);
  expect(childServers()).toEqual([]);
});

it("agrees with Pi about a server whose optional list fails with an error other than -32601: connected, that list counted 0 and named", async () => {
  const server = fixtureServer("resource-catalog", { FIXTURE_LIST_ERROR: "-32603" });
  const json = await runTest(["test", "lists", "--json"], { lists: server });
  expect(json.exitCode).toBe(0);
  expect(json.servers).toEqual([expect.objectContaining({ name: "lists", ok: true, tools: 3, resources: 0, error: null })]);
  const text = await runTest(["test", "lists"], { lists: server });
  expect(text.exitCode).toBe(0);
  expect(text.output).toMatch(/^✓ lists: fixture-resource-catalog 1\.0\.0, .*3 tools, 0 resources/);
  expect(text.output).toMatch(/\n {2}counted 0 .*lists resources\/list.*the resource index is unavailable/);
  // The same server in a Pi host: connected, its tools work.
  const h = await startHost({ lists: server });
  expect((await h.waitForState("lists", "connected")).tools).toBe(3);
  expect(textOf(await h.call("mcp__lists__counts"))).toContain('"resources/list":');
});
