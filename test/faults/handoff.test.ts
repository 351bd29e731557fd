// Credentials and definitions that change under a running session: the real
// OAuth stack (oidc-provider in front of a real MCP server) with our host, the
// pi-mcp CLI as another terminal, and a real Pi in RPC mode for /reload.
// A live client stops using removed credentials at once; at handoff a client
// is retained only when its stored credentials and its definition (both read
// again then) are still the ones it was built with.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.ts";
import { ConnectionPool } from "../../src/runtime/pool.ts";
import { setBrowserOpener } from "../../src/safety/browser.ts";
import { authorizationUrlIn, cliProcess, runCommand, useOAuthScene, type PiLikeHost } from "../auth/helpers.ts";
import { NODE, REPO_ROOT, startPiRpc, usePiHome } from "../e2e/harness/pi.ts";
import { isAlive } from "../helpers/host.ts";

/** What the session re-reads at handoff (Pi's session_shutdown does the same). */
async function handoff(pi: PiLikeHost, box: { agentDir: string; projectDir: string; env(): NodeJS.ProcessEnv }): Promise<void> {
  const settings = await loadConfig({ agentDir: box.agentDir, cwd: box.projectDir, projectTrusted: false, env: box.env() });
  await pi.host.shutdown(undefined, "replaced", { settings });
}

describe("OAuth credentials changed in another terminal", () => {
  const scene = useOAuthScene();

  async function authorizedHost(pool?: ConnectionPool): Promise<PiLikeHost> {
    await scene.sandbox((await scene.startStack()).mcpUrl);
    setBrowserOpener(async (url) => void (await scene.stack.browse(url, { deliver: true })));
    expect((await runCommand(scene.box, ["auth", "remote"])).exitCode).toBe(0);
    const pi = await scene.host(pool);
    await pi.waitFor("remote", "connected");
    expect(JSON.parse((await pi.call("whoami")).text)).toMatchObject({ sub: "test-user" });
    return pi;
  }

  it("a live session stops sending the tokens a logout removed: its next call needs authorization", async () => {
    const pi = await authorizedHost();
    const logout = await cliProcess(scene.box, ["logout", "remote"]);
    expect(logout.stdout.trim()).toBe('Removed the stored credentials of "remote"');
    const after = await pi.call("whoami").then(
      (outcome) => ({ ok: !outcome.isError, text: outcome.text }),
      (error: Error) => ({ ok: false, text: error.message }),
    );
    expect(after.ok, after.text).toBe(false);
    await pi.waitFor("remote", "needs_auth");
  });

  it("after a logout elsewhere, the session's client is closed at handoff, not retained for the next session", async () => {
    const pool = new ConnectionPool();
    const first = await authorizedHost(pool);
    expect((await cliProcess(scene.box, ["logout", "remote"])).code).toBe(0);
    await handoff(first, scene.box);
    expect(pool.size).toBe(0);
    const second = await scene.host(pool);
    await second.waitFor("remote", "needs_auth");
    expect(second.reusedAt("remote")).toBeUndefined();
  });

  it("after a new auth elsewhere, the session's client is closed at handoff and the next session connects with the new tokens", async () => {
    const pool = new ConnectionPool();
    const first = await authorizedHost(pool);
    const before = JSON.parse(await readFile(scene.box.storePath, "utf8")).servers.remote.tokens.tokens.access_token;
    // Another terminal authorizes anew: --no-open there, the browser, then --callback.
    const started = await cliProcess(scene.box, ["auth", "remote", "--no-open"]);
    expect(started.code, started.stderr).toBe(0);
    const callback = await scene.stack.browse(authorizationUrlIn(started.stdout));
    expect((await cliProcess(scene.box, ["auth", "remote", "--callback", callback])).code).toBe(0);
    const renewed = JSON.parse(await readFile(scene.box.storePath, "utf8")).servers.remote.tokens.tokens.access_token;
    expect(renewed).not.toBe(before);
    await handoff(first, scene.box);
    expect(pool.size).toBe(0);
    const second = await scene.host(pool);
    await second.waitFor("remote", "connected");
    expect(second.reusedAt("remote")).toBeUndefined();
    expect(JSON.parse((await second.call("whoami")).text)).toMatchObject({ sub: "test-user" });
  });

  it("with unchanged credentials and settings the client is still handed on", async () => {
    const pool = new ConnectionPool();
    const first = await authorizedHost(pool);
    await handoff(first, scene.box);
    expect(pool.size).toBe(1);
    const second = await scene.host(pool);
    await second.waitFor("remote", "connected");
    expect(second.reusedAt("remote")).toBeTypeOf("number");
    await pool.drain();
  });
});

describe("settings.json changed before /reload (a real Pi in RPC mode)", () => {
  const home = usePiHome();
  const PROBE = join(REPO_ROOT, "test/e2e/harness/fixtures/probe.ts");
  const CRASH = join(REPO_ROOT, "test/fixtures/servers/crash.mjs");

  it("closes the process of a changed or removed definition at the handoff, and hands on the unchanged one", async () => {
    const log = (name: string) => join(home.home, `${name}.starts`);
    const pids = async (name: string) => (await readFile(log(name), "utf8").catch(() => "")).split("\n").filter(Boolean).map(Number);
    const server = (name: string, extra: Record<string, string> = {}) => ({
      command: NODE,
      args: [CRASH],
      environment: { FIXTURE_START_LOG: log(name), ...extra },
    });
    await home.writeSettings({ mcp: { servers: { changed: server("changed"), removed: server("removed"), kept: server("kept") } } });
    const rpc = await startPiRpc({
      home: home.home,
      cwd: home.cwd,
      extensions: [REPO_ROOT, PROBE],
      noSession: false,
      script: [{ text: "ok" }],
    });
    try {
      const status = async () => {
        const { records } = await rpc.prompt("/mcp wait");
        return records
          .filter((record) => record.method === "notify")
          .map((record) => String(record.message))
          .join("\n");
      };
      expect(await status()).toMatch(/changed: connected[\s\S]*kept: connected[\s\S]*removed: connected/);
      const [changedPid, removedPid, keptPid] = [(await pids("changed"))[0]!, (await pids("removed"))[0]!, (await pids("kept"))[0]!];

      // Edited by hand (or by another Pi) while this session runs, then /reload.
      await writeFile(
        join(home.agentDir, "settings.json"),
        JSON.stringify({ mcp: { servers: { changed: server("changed", { NEW: "1" }), kept: server("kept") } } }),
      );
      await rpc.prompt("/probe_reload");
      const after = await status();
      // The old processes were closed before the new session started, not left in the pool for 30 s.
      expect(isAlive(changedPid)).toBe(false);
      expect(isAlive(removedPid)).toBe(false);
      expect(after).toMatch(/changed: connected, 2 tools, protocol [^,\n]+\n/);
      expect(after).not.toMatch(/changed: connected.*reused/);
      expect(after).toMatch(/kept: connected.*reused from an earlier session/);
      expect(after).not.toContain("removed:");
      expect(await pids("changed")).toHaveLength(2);
      expect(await pids("kept")).toEqual([keptPid]);
      expect(isAlive(keptPid)).toBe(true);
    } finally {
      await rpc.close();
    }
  }, 90_000);
});
