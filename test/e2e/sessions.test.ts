// A real Pi in RPC mode: connections survive /reload, new_session and fork within one process.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { isAlive } from "../helpers/host.ts";
import { usePiHome, NODE, REPO_ROOT, startPiRpc } from "./harness/pi.ts";

const PROBE = join(REPO_ROOT, "test/e2e/harness/fixtures/probe.ts");
const CRASH_FIXTURE = join(REPO_ROOT, "test/fixtures/servers/crash.mjs");

const home = usePiHome();

it("keeps the same server process across /reload, new_session and fork, then closes it when Pi quits", async () => {
  const startLog = join(home.home, "starts.log");
  await writeFile(
    join(home.agentDir, "settings.json"),
    JSON.stringify({ mcp: { servers: { one: { command: NODE, args: [CRASH_FIXTURE], environment: { FIXTURE_START_LOG: startLog } } } } }),
  );
  const pids = async () => (await readFile(startLog, "utf8").catch(() => "")).split("\n").filter(Boolean).map(Number);
  const rpc = await startPiRpc({
    home: home.home,
    cwd: home.cwd,
    extensions: [REPO_ROOT, PROBE],
    noSession: false,
    script: [{ text: "ok" }],
  });
  let pid = 0;
  try {
    const statusText = async () => {
      const { records } = await rpc.prompt("/mcp wait");
      return records
        .filter((record) => record.method === "notify")
        .map((record) => String(record.message))
        .join("\n");
    };
    expect(await statusText()).toContain("one: connected");
    pid = (await pids())[0] ?? 0;
    expect(pid).toBeGreaterThan(0);

    await rpc.prompt("/probe_reload");
    expect(await statusText()).toMatch(/one: connected, 2 tools, protocol [^,]+, reused from an earlier session/);
    expect(await pids()).toEqual([pid]);

    expect((await rpc.send({ type: "new_session" })).data).toEqual({ cancelled: false });
    expect(await statusText()).toMatch(/one: connected.*reused from an earlier session/);
    expect(await pids()).toEqual([pid]);

    await rpc.prompt("a message to fork from");
    const [message] = (await rpc.send({ type: "get_fork_messages" })).data.messages;
    expect((await rpc.send({ type: "fork", entryId: message.entryId })).data).toMatchObject({ cancelled: false });
    expect(await statusText()).toMatch(/one: connected.*reused from an earlier session/);
    expect(await pids()).toEqual([pid]);
    expect(isAlive(pid)).toBe(true);
  } finally {
    await rpc.close();
  }
  expect(isAlive(pid)).toBe(false);
}, 90_000);
