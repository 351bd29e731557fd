// Local (stdio) servers through OUR host: the child's environment and working
// folder, a stderr flood, and servers whose stdout is not clean protocol.
import { dirname } from "node:path";
import { afterEach, expect, it, vi } from "vitest";
import { fixtureServer, startHost, stopAllHosts, textOf, until } from "../helpers/host.ts";
import { fixturePath, nodePath } from "../helpers/servers.ts";
import { RETAINED_LOG_BYTES } from "../../src/runtime/retained-log.ts";

afterEach(async () => {
  vi.restoreAllMocks();
  delete process.env.PI_MCP_PARENT_SECRET;
  await stopAllHosts();
});

/** What the SDK's getDefaultEnvironment() passes on, on POSIX. */
const SDK_DEFAULT_VARS = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

it("gives a stdio server only the SDK's default variables plus its configured environment and its tree marker, never the parent's", async () => {
  process.env.PI_MCP_PARENT_SECRET = "parent-secret-do-not-leak";
  const h = await startHost({ basic: fixtureServer("basic", { FIXTURE_CONFIGURED: "configured-value" }) });
  await h.waitForTools(3, { server: "basic" });
  const env = JSON.parse(textOf(await h.call("mcp__basic__env"))) as Record<string, string>;
  expect(env.FIXTURE_CONFIGURED).toBe("configured-value");
  expect(env.PI_MCP_PARENT_SECRET).toBeUndefined();
  expect(JSON.stringify(env)).not.toContain("parent-secret-do-not-leak");
  const expected = SDK_DEFAULT_VARS.filter((name) => process.env[name] !== undefined && !process.env[name]!.startsWith("()"));
  // PI_MCP_TREE marks every process of the server's tree (see src/safety/process-tree.ts): an opaque id, no value of Pi's.
  expect(Object.keys(env).sort()).toEqual([...expected, "FIXTURE_CONFIGURED", "PI_MCP_TREE"].sort());
  expect(env.PI_MCP_TREE).toMatch(/^[0-9a-f]{16}\.\d+$/);
});

it("runs a stdio server in its cwd, resolved relative to the host's cwd", async () => {
  const servers = dirname(fixturePath("basic"));
  // Only the relative cwd makes the relative script path resolvable.
  const h = await startHost(
    { relative: { command: nodePath(), args: ["./basic.mjs"], cwd: "servers" } },
    { cwd: dirname(servers), retry: { maxRetries: 0 } },
  );
  await h.waitForTools(3, { server: "relative" });
  expect(textOf(await h.call("mcp__relative__echo", { text: "from cwd" }))).toBe("from cwd");
});

it("drains a 20 MB stderr flood into a retained log of at most 256 KiB without stalling the server or writing to our own output", async () => {
  const stderrWrite = vi.spyOn(process.stderr, "write");
  const stdoutWrite = vi.spyOn(process.stdout, "write");
  const h = await startHost({ flood: fixtureServer("stderr-flood", { FIXTURE_FLOOD_MB: "20" }) });
  await h.waitForTools(1, { server: "flood", timeoutMs: 15_000 });
  const log = h.host.server("flood")!.log;
  await until(
    () => log.text().includes("FLOOD DONE"),
    20_000,
    () => `retained ${log.bytes} bytes, dropped ${log.droppedBytes}`,
  );
  expect(log.droppedBytes + log.bytes).toBeGreaterThanOrEqual(20 * 1024 * 1024);
  expect(log.bytes).toBeLessThanOrEqual(RETAINED_LOG_BYTES);
  expect(Buffer.byteLength(log.text(), "utf8")).toBeLessThanOrEqual(256 * 1024);
  expect(textOf(await h.call("mcp__flood__echo", { text: "after the flood" }))).toBe("after the flood");
  expect(stderrWrite).not.toHaveBeenCalled();
  expect(stdoutWrite).not.toHaveBeenCalled();
}, 40_000);

it.each(["stdout-noise", "malformed"])("still works with the %s fixture's broken stdout", async (fixture) => {
  const h = await startHost({ noisy: fixtureServer(fixture) });
  await h.waitForState("noisy", "connected");
  await h.waitForTools(1, { server: "noisy" });
  for (let i = 0; i < 3; i++) expect(textOf(await h.call("mcp__noisy__echo", { text: `hello ${i}` }))).toBe(`hello ${i}`);
  expect(h.status("noisy").state).toBe("connected");
});
