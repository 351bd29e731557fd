// Files corrupted between two operations, with a running host and real server
// processes: the settings file and the OAuth credential store. A mutation fails
// cleanly, the file is left exactly as it was (nothing half-written, no
// temporary or lock files left), and the running host keeps its connections.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { credentialStore } from "../../plugins/auth-oauth/commands.ts";
import { runCommandLine } from "../../src/commands/index.ts";
import type { CommandEnvironment } from "../../src/kernel/commands.ts";
import { createKernel, surfaceCommands } from "../../src/composition.ts";
import { loadConfig } from "../../src/config/load.ts";
import type { EffectiveConfig } from "../../src/kernel/settings.ts";
import { McpHost } from "../../src/runtime/host.ts";
import { createRedactor } from "../../src/safety/text.ts";
import { piTruncate, recordingSink, textOf, until } from "../helpers/host.ts";
import { fixturePath, nodePath } from "../helpers/servers.ts";
import { createSandbox, type Sandbox } from "../helpers/tmp.ts";
import { filesUnder } from "./_shared.ts";

let sandbox: Sandbox;
let host: McpHost | undefined;
beforeEach(async () => {
  sandbox = await createSandbox();
});
afterEach(async () => {
  await host?.shutdown();
  host = undefined;
  await sandbox.cleanup();
});

const basic = () => ({ command: nodePath(), args: [fixturePath("basic")] });

/** A running host over the sandbox's settings, as the Pi extension runs one, and the `/mcp` command environment wired to it. */
async function runningPi(): Promise<{ env: CommandEnvironment; sink: ReturnType<typeof recordingSink>; changes: () => number }> {
  const load = () => loadConfig({ agentDir: sandbox.agentDir, cwd: sandbox.projectDir, projectTrusted: false, env: sandbox.env() });
  const config: EffectiveConfig = await load();
  expect(config.valid).toBe(true);
  const privateDir = join(sandbox.root, "private");
  const kernel = createKernel();
  const context = {
    cwd: sandbox.projectDir,
    agentDir: sandbox.agentDir,
    privateDir,
    config,
    redact: createRedactor(config.secrets),
    truncate: piTruncate,
    services: {},
  };
  const sink = recordingSink();
  const running = new McpHost(kernel, context, sink);
  host = running;
  await running.start();
  let changes = 0;
  const env: CommandEnvironment = {
    surface: "pi",
    agentDir: sandbox.agentDir,
    cwd: sandbox.projectDir,
    env: sandbox.env(),
    projectTrusted: false,
    savedTrust: null,
    credentials: { has: async () => false, remove: async () => false },
    createKernel: async () => createKernel(),
    loadConfig: load,
    runtime: {
      settingsChanged: async () => {
        changes++;
        const loaded = await load();
        await running.applyConfig(loaded, createRedactor(loaded.secrets));
      },
      status: async () => ({ config: running.config, servers: running.status() }),
      reconnect: (name) => running.reconnect(name),
      host: async () => running,
      settled: (timeoutMs) => running.settled(timeoutMs),
    },
  };
  return { env, sink, changes: () => changes };
}

const run = (env: CommandEnvironment, argv: string[]) => runCommandLine(surfaceCommands("pi"), argv, env);

async function call(sink: ReturnType<typeof recordingSink>, server: string, text: string): Promise<string> {
  return textOf(await sink.tools.get(`mcp__${server}__echo`)!.execute({ text }, {}));
}

describe("the settings file corrupted between two operations", () => {
  it("makes the next mutation fail cleanly: the file is untouched, nothing is left beside it, the running host keeps every connection", async () => {
    await sandbox.writeJson(sandbox.globalSettings, { theme: "dark", mcp: { servers: { one: basic(), two: basic() } } });
    const { env, sink, changes } = await runningPi();
    await until(
      () => sink.active.size >= 6,
      15_000,
      () => `active: ${[...sink.active].join(", ")}`,
    );

    // Operation 1 succeeds and reaches the running host.
    const added = await run(env, ["add", "three", "--", nodePath(), fixturePath("basic")]);
    expect(added.exitCode).toBe(0);
    await until(() => sink.active.has("mcp__three__echo"), 15_000);
    expect(changes()).toBe(1);

    // Something else leaves the file half-written.
    const whole = await readFile(sandbox.globalSettings, "utf8");
    const corrupt = whole.slice(0, Math.floor(whole.length / 2));
    await writeFile(sandbox.globalSettings, corrupt);
    const filesBefore = await filesUnder(sandbox.agentDir);

    // Operation 2 (and any later one) fails with a clear message and writes nothing.
    for (const argv of [
      ["disable", "one"],
      ["remove", "two"],
      ["add", "four", "--", nodePath(), fixturePath("basic")],
    ]) {
      const result = await run(env, argv);
      expect(result.exitCode).not.toBe(0);
      expect(result.output).toContain(`${sandbox.globalSettings} is not valid JSON; nothing was changed`);
    }
    expect(await readFile(sandbox.globalSettings, "utf8")).toBe(corrupt);
    expect(await filesUnder(sandbox.agentDir)).toEqual(filesBefore);
    expect(changes()).toBe(1);

    // The host never noticed: every server is still connected and answers.
    expect(host!.status().map((status) => [status.name, status.state])).toEqual([
      ["one", "connected"],
      ["two", "connected"],
      ["three", "connected"],
    ]);
    for (const server of ["one", "two", "three"]) expect(await call(sink, server, server)).toBe(server);

    // Once the file is repaired, mutations work again.
    await writeFile(sandbox.globalSettings, whole);
    expect((await run(env, ["disable", "three"])).exitCode).toBe(0);
    await until(() => !sink.active.has("mcp__three__echo"), 30_000);
    expect(JSON.parse(await readFile(sandbox.globalSettings, "utf8"))).toMatchObject({
      theme: "dark",
      mcp: { servers: { three: { enabled: false } } },
    });
  }, 60_000);
});

describe("the OAuth credential store corrupted between two operations", () => {
  it("makes the next logout fail cleanly, naming the reset command; the file is untouched and the host keeps its connections", async () => {
    await sandbox.writeJson(sandbox.globalSettings, { mcp: { servers: { one: basic() } } });
    const store = credentialStore(sandbox.agentDir);
    const entry = (url: string) => ({
      url,
      client: "dynamic|http://127.0.0.1:0/callback",
      tokens: { tokens: { access_token: "secret-token", token_type: "Bearer" }, obtainedAt: Date.now() },
    });
    await writeFile(
      store.path,
      `${JSON.stringify({ version: 1, servers: { a: entry("https://a.example/mcp"), b: entry("https://b.example/mcp") } }, null, 2)}\n`,
      { mode: 0o600 },
    );
    const { env, sink } = await runningPi();
    await until(() => sink.active.has("mcp__one__echo"), 15_000);

    const first = await run(env, ["logout", "a"]);
    expect(first.exitCode).toBe(0);
    expect(Object.keys((JSON.parse(await readFile(store.path, "utf8")) as { servers: object }).servers)).toEqual(["b"]);

    const whole = await readFile(store.path, "utf8");
    const corrupt = whole.slice(0, Math.floor(whole.length / 2));
    await writeFile(store.path, corrupt, { mode: 0o600 });
    const filesBefore = await filesUnder(sandbox.agentDir);

    const second = await run(env, ["logout", "b"]);
    expect(second.exitCode).not.toBe(0);
    expect(second.output).toContain(`${store.path} is not valid JSON`);
    expect(second.output).toContain("logout --all --force");
    expect(second.output).not.toContain("secret-token");
    expect(await readFile(store.path, "utf8")).toBe(corrupt);
    expect(await filesUnder(sandbox.agentDir)).toEqual(filesBefore);
    expect(host!.status().map((status) => status.state)).toEqual(["connected"]);
    expect(await call(sink, "one", "still")).toBe("still");
  }, 30_000);
});
