// A real Pi in RPC mode with the real filesystem server: changing only a
// server's `roots` keeps its process and tells it with
// notifications/roots/list_changed, both through `/mcp add` and through
// settings edited by hand followed by /reload.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { eventually, packageServer } from "../helpers/host.ts";
import { mcpInRpc, REPO_ROOT, startPiRpc, usePiHome, type PiRpc } from "./harness/pi.ts";

const PROBE = join(REPO_ROOT, "test/e2e/harness/fixtures/probe.ts");
const APPLIED = "Updated allowed directories from MCP roots";
const home = usePiHome();

/** How often the server's retained log (this session's) says it applied roots, and how many connection attempts it holds. */
async function logOf(rpc: PiRpc): Promise<{ text: string; applied: number; attempts: number }> {
  const text = await mcpInRpc(rpc, "logs fs");
  return { text, applied: text.split(APPLIED).length - 1, attempts: text.split("── connection attempt").length - 1 };
}

/** Waits until the log says the server applied roots `count` times. */
function appliedTimes(rpc: PiRpc, count: number) {
  return eventually(
    async () => {
      const log = await logOf(rpc);
      return log.applied >= count && log;
    },
    30_000,
    () => `the filesystem server did not apply roots ${count} times`,
  ).catch(async (error) => {
    throw new Error(`${error.message}\n${(await logOf(rpc)).text}`);
  });
}

it("/mcp add that changes only roots announces them to the live server instead of restarting it", async () => {
  const data = join(home.cwd, "data");
  await mkdir(data);
  const fs = packageServer("@modelcontextprotocol/server-filesystem", [home.cwd]);
  await home.writeSettings({ mcp: { servers: { fs } } });
  const rpc = await startPiRpc({ home: home.home, cwd: home.cwd, extensions: [REPO_ROOT] });
  try {
    expect(await mcpInRpc(rpc, "wait")).toContain("fs: connected");
    await appliedTimes(rpc, 1);
    const command = [fs.command, ...(fs.args as string[])].join(" ");
    expect(await mcpInRpc(rpc, `add fs --root ${data} -- ${command}`)).toContain(`Replaced global server "fs"`);
    const log = await appliedTimes(rpc, 2);
    // One connection attempt in the log: the same connection (a restart would start a log of its own).
    expect(log.attempts).toBe(1);
    expect(log.text).toContain(`roots changed: file://${data}`);
    expect(await mcpInRpc(rpc, "status")).toContain(`roots: ${data}`);
  } finally {
    await rpc.close();
  }
}, 90_000);

it("roots edited in settings.json, then /reload: the next session takes the connection over and announces them", async () => {
  const data = join(home.cwd, "data");
  await mkdir(data);
  await home.writeSettings({ mcp: { servers: { fs: packageServer("@modelcontextprotocol/server-filesystem", [home.cwd]) } } });
  const rpc = await startPiRpc({ home: home.home, cwd: home.cwd, extensions: [REPO_ROOT, PROBE], noSession: false });
  try {
    expect(await mcpInRpc(rpc, "wait")).toContain("fs: connected");
    await appliedTimes(rpc, 1);
    const file = join(home.agentDir, "settings.json");
    const settings = JSON.parse(await readFile(file, "utf8"));
    settings.mcp.servers.fs.roots = [data];
    await writeFile(file, JSON.stringify(settings));
    await rpc.prompt("/probe_reload");
    expect(await mcpInRpc(rpc, "wait")).toMatch(/fs: connected, \d+ tools, protocol [^,]+, reused from an earlier session/);
    // The new session's log: the server heard of the change and asked again, with no new connection attempt.
    const log = await appliedTimes(rpc, 1);
    expect(log.attempts).toBe(0);
    expect(log.text).toContain(`roots changed: file://${data}`);
  } finally {
    await rpc.close();
  }
}, 90_000);
