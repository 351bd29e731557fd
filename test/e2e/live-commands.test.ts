// Commands beside and inside a live Pi session (RPC mode, faux model):
// `test` leaves the live connection alone, `/mcp reconnect` replaces it, and a
// server added or enabled in the session that cannot start keeps its setting.
import { existsSync } from "node:fs";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isAlive, until } from "../helpers/host.ts";
import { fixtureEvent, fixtureEvents, fixturePath } from "../helpers/servers.ts";
import { nodeBinary, runProcess } from "../helpers/tmp.ts";
import { mcpInRpc, NODE, REPO_ROOT, startPiRpc, usePiHome, type FauxStep, type PiRpc } from "./harness/pi.ts";

const home = usePiHome();

/** The model calls one MCP tool, then says what it got. */
const callAndTell = (name: string, args: Record<string, unknown> = {}): FauxStep[] => [
  { toolCall: { name, arguments: args } },
  { textFromLastToolResult: true, prefix: "got: " },
];

/** The final assistant text of the run that `records` holds. */
function reply(records: any[]): string {
  const end = records.filter((record) => record.type === "message_end" && record.message?.role === "assistant").at(-1);
  return (end?.message?.content ?? [])
    .filter((part: any) => part.type === "text")
    .map((part: any) => part.text)
    .join("");
}

async function ask(rpc: PiRpc, message: string): Promise<string> {
  return reply((await rpc.prompt(message, { timeoutMs: 30_000 })).records);
}

/** The pi-mcp CLI (from source) on the same agent folder and project as the Pi session. */
function cli(argv: readonly string[]) {
  return runProcess(nodeBinary(), ["--experimental-transform-types", "--no-warnings", join(REPO_ROOT, "cli/index.ts"), ...argv], {
    cwd: home.cwd,
    env: { PATH: process.env.PATH ?? "", HOME: home.home, PI_CODING_AGENT_DIR: home.agentDir },
    timeoutMs: 30_000,
  });
}

function witness(events: string, extra: Record<string, string> = {}) {
  return { command: NODE, args: [fixturePath("witness")], environment: { FIXTURE_EVENTS: events, ...extra } };
}

describe("test beside a live session", () => {
  it("`pi-mcp test` and `/mcp test` connect their own temporary clients: the live connection, its process and a call in flight are untouched", async () => {
    const events = join(home.home, "events.jsonl");
    const gate = join(home.home, "gate");
    await home.writeSettings({ mcp: { servers: { w: witness(events) } } });
    const script = [...callAndTell("mcp__w__count"), ...callAndTell("mcp__w__hold", { gate }), ...callAndTell("mcp__w__count")];
    const rpc = await startPiRpc({ home: home.home, cwd: home.cwd, extensions: [REPO_ROOT], script });
    try {
      expect(await mcpInRpc(rpc, "wait")).toContain("w: connected");
      const first = await ask(rpc, "count once");
      const live = Number(/^got: pid=(\d+) calls=1$/.exec(first)?.[1]);
      expect(live, first).toBeGreaterThan(0);

      // Inside the session: its own temporary client, not the live one.
      expect(await mcpInRpc(rpc, "test w")).toMatch(/^✓ w: fixture-witness 1\.0\.0, protocol \S+, 4 tools/);

      // A call in flight on the live connection while the CLI tests the same server from another process.
      const since = rpc.records.length;
      const held = rpc.send({ type: "prompt", message: "hold on" });
      await fixtureEvent(events, (event) => event.event === "call" && event.tool === "hold");
      const tested = await cli(["test", "w", "--json"]);
      expect(tested.code, tested.stderr).toBe(0);
      expect(JSON.parse(tested.stdout).servers[0]).toMatchObject({ name: "w", ok: true, tools: 4, error: null });
      await writeFile(gate, "");
      expect((await held).success).toBe(true);
      await rpc.waitFor((record) => record.type === "agent_settled", { since, timeoutMs: 30_000 });
      expect(reply(rpc.records.slice(since))).toBe("got: released");

      // Two temporary processes came and went; the live one never saw its stdin close and still counts on.
      const seen = await fixtureEvents(events);
      const temporary = [...new Set(seen.filter((event) => event.event === "start" && event.pid !== live).map((event) => event.pid))];
      expect(temporary).toHaveLength(2);
      for (const pid of temporary) {
        expect(seen.some((event) => event.pid === pid && event.event === "stdin-end")).toBe(true);
        await until(
          () => !isAlive(pid),
          30_000,
          () => `temporary server ${pid} is still running`,
        );
      }
      expect(seen.filter((event) => event.pid === live).map((event) => event.event)).toEqual(["start", "call", "call"]);
      expect(isAlive(live)).toBe(true);
      expect(await ask(rpc, "count again")).toBe(`got: pid=${live} calls=2`);
      expect(await mcpInRpc(rpc, "status")).toMatch(/^w: connected, 4 tools, protocol [^,\n]+$/m);
    } finally {
      await rpc.close();
    }
  }, 120_000);
});

describe("/mcp reconnect", () => {
  it("replaces the live connection with a new process, also after the retries ran out", async () => {
    const events = join(home.home, "events.jsonl");
    const refuse = join(home.home, "refuse");
    await home.writeSettings({ mcp: { retry: { maxRetries: 0 }, servers: { w: witness(events, { FIXTURE_FAIL_WHILE: refuse }) } } });
    const rpc = await startPiRpc({
      home: home.home,
      cwd: home.cwd,
      extensions: [REPO_ROOT],
      script: [...callAndTell("mcp__w__count"), ...callAndTell("mcp__w__count")],
    });
    try {
      expect(await mcpInRpc(rpc, "wait")).toContain("w: connected");
      const [first] = (await fixtureEvents(events)).filter((event) => event.event === "start");

      expect(await mcpInRpc(rpc, "reconnect w")).toBe('Reconnected "w": connected');
      const starts = (await fixtureEvents(events)).filter((event) => event.event === "start");
      expect(starts).toHaveLength(2);
      const second = starts[1]!.pid;
      expect(second).not.toBe(first!.pid);
      expect((await fixtureEvents(events)).some((event) => event.pid === first!.pid && event.event === "stdin-end")).toBe(true);
      await until(
        () => !isAlive(first!.pid),
        30_000,
        () => "the replaced server is still running",
      );
      expect(await ask(rpc, "count")).toBe(`got: pid=${second} calls=1`);

      // It fails for good (no retries left); once it can start again, reconnect brings it back.
      await writeFile(refuse, "");
      const failed = await mcpInRpc(rpc, "reconnect w");
      expect(failed).toMatch(/^Reconnected "w": failed/);
      expect(await mcpInRpc(rpc, "status")).toMatch(/^w: failed/m);
      await rm(refuse);
      expect(await mcpInRpc(rpc, "reconnect w")).toBe('Reconnected "w": connected');
      const third = (await fixtureEvents(events)).filter((event) => event.event === "start").at(-1)!.pid;
      expect(await ask(rpc, "count")).toBe(`got: pid=${third} calls=1`);
    } finally {
      await rpc.close();
    }
  }, 120_000);
});

describe("a failed connection never rolls back the setting", () => {
  it("/mcp add and /mcp enable persist first; a server that cannot start fails in the background and its setting stays", async () => {
    const settingsFile = join(home.agentDir, "settings.json");
    await home.writeSettings({
      theme: "dark",
      mcp: {
        connectTimeoutMs: 5_000,
        retry: { maxRetries: 0 },
        servers: { off: { command: "/nonexistent/pi-mcp-test/server", enabled: false } },
      },
    });
    const rpc = await startPiRpc({ home: home.home, cwd: home.cwd, extensions: [REPO_ROOT] });
    const settings = async () => JSON.parse(await readFile(settingsFile, "utf8"));
    try {
      await mcpInRpc(rpc, "wait");
      // A command that does not exist, and a server that never answers initialize (it times out).
      expect(await mcpInRpc(rpc, "add missing -- /nonexistent/pi-mcp-test/server --flag")).toMatch(/^Added global server "missing"/);
      expect(await mcpInRpc(rpc, `add mute --env FIXTURE_HANG=initialize -- ${NODE} ${fixturePath("hang")}`)).toMatch(
        /^Added global server "mute"/,
      );
      // Persisted first, connected in the background: the command returned while `mute` was still connecting.
      expect(await mcpInRpc(rpc, "status")).toMatch(/^mute: connecting/m);
      expect(await mcpInRpc(rpc, "enable off")).toMatch(/^Enabled global server "off"/);
      const written = await settings();
      expect(written.theme).toBe("dark");
      expect(written.mcp.servers).toEqual({
        off: { command: "/nonexistent/pi-mcp-test/server" },
        missing: { command: "/nonexistent/pi-mcp-test/server", args: ["--flag"] },
        mute: { command: NODE, args: [fixturePath("hang")], environment: { FIXTURE_HANG: "initialize" } },
      });
      const status = await mcpInRpc(rpc, "wait --timeout 20000");
      expect(status).toMatch(/^missing: failed/m);
      expect(status).toMatch(/^mute: failed/m);
      expect(status).toMatch(/^off: failed/m);
      expect(status).toMatch(/connecting took longer than 5000 ms/);
      expect(await settings()).toEqual(written);
    } finally {
      await rpc.close();
    }
    // And the next session starts from the same settings (nothing was undone on the way out).
    expect(existsSync(settingsFile)).toBe(true);
    expect((await settings()).mcp.servers.mute.environment).toEqual({ FIXTURE_HANG: "initialize" });
  }, 120_000);
});
