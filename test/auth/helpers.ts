/**
 * A Pi-like setup for the OAuth tests: a sandboxed agent folder whose
 * settings name the protected server, a host (our McpHost and kernel) on that
 * agent folder, the commands run through the shared core with a runtime that
 * controls that host, and the CLI (source) as separate processes.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach } from "vitest";
import { setBrowserOpener } from "../../src/safety/browser.ts";
import { runCommandLine, type CommandResult } from "../../src/commands/index.ts";
import { cliCommandEnvironment } from "../../src/commands/environment.ts";
import { credentialQueries } from "../../plugins/auth-oauth/store.ts";
import type { CommandEnvironment, RuntimeControl } from "../../src/kernel/commands.ts";
import { createKernel, surfaceCommands } from "../../src/composition.ts";
import { loadConfig } from "../../src/config/load.ts";
import type { HostContext } from "../../src/kernel/types.ts";
import type { ConnectionState } from "../../src/kernel/status.ts";
import { McpHost, type BridgedTool } from "../../src/runtime/host.ts";
import type { ConnectionPool } from "../../src/runtime/pool.ts";
import { createRedactor } from "../../src/safety/text.ts";
import { REPO_ROOT, createSandbox, nodeBinary, runProcess, type ProcessResult, type Sandbox } from "../helpers/tmp.ts";
import { freePort } from "../helpers/servers.ts";
import { until } from "../helpers/wait.ts";
import { startOAuthStack, type OAuthStack, type OAuthStackOptions } from "./fixtures/oauth-stack.ts";

export interface AuthSandbox extends Sandbox {
  readonly redirectUri: string;
  readonly storePath: string;
}

/** A sandbox whose global settings define `servers` (raw settings values). */
async function authSandbox(servers: (redirectUri: string) => Record<string, unknown>): Promise<AuthSandbox> {
  const box = await createSandbox();
  const redirectUri = `http://127.0.0.1:${await freePort()}/mcp/oauth/callback`;
  await box.writeJson(box.globalSettings, {
    mcp: { connectTimeoutMs: 5_000, requestTimeoutMs: 10_000, retry: { maxRetries: 0 }, servers: servers(redirectUri) },
  });
  return { ...box, redirectUri, storePath: join(box.agentDir, "mcp-auth.json") };
}

export interface PiLikeHost {
  readonly host: McpHost;
  readonly tools: Map<string, BridgedTool>;
  readonly runtime: RuntimeControl;
  state(name: string): ConnectionState;
  reusedAt(name: string): number | undefined;
  cause(name: string): string | undefined;
  waitFor(name: string, states: ConnectionState | readonly ConnectionState[], timeoutMs?: number): Promise<void>;
  call(tool: string, args?: Record<string, unknown>): Promise<{ text: string; isError: boolean }>;
  stop(): Promise<void>;
}

/** Our host on the sandbox's agent folder, as Pi's session would run it (with `pool`, sessions of one Pi process). */
async function startPiLikeHost(box: Sandbox, pool?: ConnectionPool): Promise<PiLikeHost> {
  const config = await loadConfig({ agentDir: box.agentDir, cwd: box.projectDir, projectTrusted: false, env: box.env() });
  if (!config.valid) throw new Error(JSON.stringify(config.issues));
  const context: HostContext = {
    cwd: box.projectDir,
    agentDir: box.agentDir,
    privateDir: join(box.root, "private"),
    config,
    redact: createRedactor(config.secrets),
    truncate: (text) => ({ text, truncated: false }),
    services: {},
  };
  const tools = new Map<string, BridgedTool>();
  const kernel = createKernel();
  const host = new McpHost(
    kernel,
    context,
    {
      register: (bridged) => {
        for (const tool of bridged) tools.set(tool.tool.name, tool);
      },
      deactivate: () => undefined,
    },
    {},
    pool,
  );
  await host.start();
  const status = (name: string) => host.status().find((server) => server.name === name);
  const runtime: RuntimeControl = {
    settingsChanged: async () => undefined,
    status: async () => ({ config, servers: host.status() }),
    reconnect: (name) => host.reconnect(name),
    settled: async () => true,
    host: async () => host,
  };
  return {
    host,
    tools,
    runtime,
    state: (name) => status(name)?.state ?? "disabled",
    reusedAt: (name) => status(name)?.reusedAt,
    cause: (name) => status(name)?.cause,
    async waitFor(name, states, timeoutMs = 30_000) {
      const wanted: readonly ConnectionState[] = typeof states === "string" ? [states] : states;
      await until(
        () => wanted.includes(status(name)?.state ?? "disabled"),
        timeoutMs,
        () => JSON.stringify(status(name)),
      );
    },
    async call(tool, args = {}) {
      const bridged = tools.get(tool);
      if (!bridged) throw new Error(`no tool ${tool}`);
      const outcome = await bridged.execute(args, {});
      return { text: outcome.content.map((item) => (item.type === "text" ? item.text : "")).join("\n"), isError: outcome.isError };
    },
    stop: () => host.shutdown(),
  };
}

/**
 * Resolves once the access token stored for `server` has expired: at the expiry
 * the client stored with it, which is never earlier than the authorization
 * server's own (the client counts from when the token arrived).
 */
export async function accessTokenExpiry(storePath: string, server = "remote"): Promise<void> {
  const entry = JSON.parse(await readFile(storePath, "utf8")).servers?.[server];
  const expiresAt: unknown = entry?.tokens?.expiresAt;
  if (typeof expiresAt !== "number") throw new Error(`no access token expiry stored for "${server}"`);
  await until(
    () => Date.now() >= expiresAt,
    expiresAt - Date.now() + 10_000,
    () => `the token of "${server}" did not expire`,
  );
}

/** Runs a command line through the shared core on the CLI surface (or /mcp with `runtime`), capturing progress lines. */
export async function runCommand(
  box: Sandbox,
  argv: readonly string[],
  runtime?: RuntimeControl,
): Promise<CommandResult & { progress: string[] }> {
  const progress: string[] = [];
  const base = cliCommandEnvironment(box.projectDir, box.env(), async () => createKernel(), { credentials: credentialQueries });
  const env: CommandEnvironment = { ...base, ...(runtime && { surface: "pi" as const, runtime }), progress: (text) => progress.push(text) };
  const commands = surfaceCommands(runtime ? "pi" : "cli");
  const result = await runCommandLine(commands, argv, env);
  return { ...result, progress };
}

/** The pi-mcp CLI from source, as its own process. */
export function cliProcess(box: Sandbox, argv: readonly string[], timeoutMs = 30_000): Promise<ProcessResult> {
  return runProcess(nodeBinary(), ["--experimental-transform-types", "--no-warnings", join(REPO_ROOT, "cli/index.ts"), ...argv], {
    cwd: box.projectDir,
    env: box.env(),
    timeoutMs,
  });
}

/** The authorization URL printed by `auth --no-open`. */
export function authorizationUrlIn(output: string): string {
  const match = /(http:\/\/127\.0\.0\.1:\d+\/auth\?\S+)/.exec(output);
  if (!match) throw new Error(`no authorization URL in: ${output}`);
  return match[1]!;
}

/**
 * One OAuth test's parts, ended after each test of the calling file (hosts
 * stopped, stack stopped, sandbox removed, the browser opener restored): the
 * real OAuth stack, a sandbox whose settings name a `remote` server, and the
 * hosts started on that sandbox.
 */
export interface OAuthScene {
  readonly stack: OAuthStack;
  readonly box: AuthSandbox;
  startStack(options?: OAuthStackOptions): Promise<OAuthStack>;
  /** The sandbox: `remote` at `url`, authenticated by `auth(redirectUri)` (default: OAuth on the sandbox's loopback redirect). */
  sandbox(url: string, auth?: (redirectUri: string) => Record<string, unknown>): Promise<AuthSandbox>;
  host(pool?: ConnectionPool): Promise<PiLikeHost>;
}

export function useOAuthScene(): OAuthScene {
  let stack: OAuthStack | undefined;
  let box: AuthSandbox | undefined;
  let hosts: PiLikeHost[] = [];
  afterEach(async () => {
    setBrowserOpener(undefined);
    for (const host of hosts) await host.stop().catch(() => undefined);
    hosts = [];
    await stack?.stop();
    await box?.cleanup();
    stack = undefined;
    box = undefined;
  });
  const required = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`the OAuth scene has no ${what} yet`);
    return value;
  };
  return {
    get stack() {
      return required(stack, "stack");
    },
    get box() {
      return required(box, "sandbox");
    },
    startStack: async (options = {}) => (stack = await startOAuthStack(options)),
    sandbox: async (url, auth = (redirectUri) => ({ type: "oauth", redirectUri })) =>
      (box = await authSandbox((redirectUri) => ({ remote: { url, auth: auth(redirectUri) } }))),
    async host(pool) {
      const started = await startPiLikeHost(required(box, "sandbox"), pool);
      hosts.push(started);
      return started;
    },
  };
}
