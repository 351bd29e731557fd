import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeError, PiMcpError } from "../kernel/errors.ts";
import type { HostContext } from "../kernel/types.ts";
import type { HostServices } from "../kernel/services.ts";
import type { ConnectionStatus } from "../kernel/status.ts";
import { createRedactor, safeText } from "../safety/text.ts";
import type { EffectiveConfig } from "../kernel/settings.ts";
import { describeRoots } from "../config/roots.ts";
import { wrapColumns } from "./text.ts";
import type { CommandEnvironment, CommandResult, CommandSpec, RuntimeControl } from "../kernel/commands.ts";
import { JSON_OPTION } from "./parse.ts";

export { wrapColumns } from "./text.ts";

/** The optional lists that failed for a server that connected (a symbol: shown in the text, not part of the `test --json` document). */
export const LIST_PROBLEMS: unique symbol = Symbol("list problems");

/** One server in the `test --json` document (a contract, documented in the README). */

export interface TestedServer {
  readonly [LIST_PROBLEMS]?: readonly string[];
  readonly name: string;
  readonly ok: boolean;
  readonly protocolVersion: string | null;
  readonly serverInfo: { readonly name: string; readonly version: string } | null;
  readonly tools: number;
  readonly resources: number;
  readonly resourceTemplates: number;
  readonly prompts: number;
  readonly connectMs: number;
  readonly error: string | null;
}

export const testCommand: CommandSpec = {
  name: "test",
  surfaces: ["cli", "pi"],
  summary: "Connect temporary clients and close them (live connections are not touched)",
  usage: "test <server> | --all [--json]",
  positionals: [{ name: "server", description: "Server name" }],
  options: {
    all: { type: "boolean", description: "Test every enabled server" },
    json: JSON_OPTION,
  },
  examples: [
    { line: "test docs", description: "Connect to docs with a temporary client and report what it offers" },
    { line: "test --all", description: "Test every enabled server; exit code 1 when any failed" },
    { line: "test --all --json", description: "The same as one JSON document", only: "cli" },
  ],
  async run(input, env) {
    const name = input.positionals[0];
    if ((name === undefined) === !input.options.all) throw new PiMcpError("usage", "test: name one <server>, or pass --all\nusage: test <server> | --all [--json]");
    const config = await env.loadConfig();
    if (!config.valid) {
      const reasons = config.issues.map((issue) => `${issue.path}: ${issue.message}`).join("; ");
      throw new PiMcpError("invalid_settings", safeText(`settings are invalid: ${reasons}`, createRedactor(config.secrets)));
    }
    const entries = config.servers.filter((entry) => (name === undefined ? entry.enabled : entry.name === name));
    if (name !== undefined && entries.length === 0) throw new PiMcpError("not_found", `server "${name}" is not configured`);
    const servers = await Promise.all(entries.map((entry) => testServer(env, config, entry.name)));
    const ok = servers.every((server) => server.ok);
    const output = servers.length > 0 ? servers.map(formatTested).join("\n") : `No enabled MCP servers to test (${env.surface === "cli" ? "pi-mcp" : "/mcp"} list shows the configured ones).`;
    return { exitCode: ok ? 0 : 1, output, json: { servers }, report: true };
  },
};

/**
 * What `test` offers the plugins: Pi's model, as far as declaring it goes, so
 * a server sees the same client capabilities (and offers the same tools) as
 * in Pi. Any request only Pi could answer is declined (no dialog exists, so
 * elicitation declines too).
 */
const TEST_SERVICES: HostServices = {
  model: { complete: () => Promise.reject(new PiMcpError("failed", "pi-mcp test answers no sampling request")) },
};

/** Connects one server with a throwaway host (always enabled, so a disabled server can be tested too). */
export async function testServer(env: CommandEnvironment, config: EffectiveConfig, name: string): Promise<TestedServer> {
  const privateDir = await mkdtemp(join(tmpdir(), "pi-mcp-test-"));
  const entry = config.servers.find((server) => server.name === name)!;
  if (entry.masked) return failed(name, 0, "masked by the project settings: there is no definition to connect");
  const single: EffectiveConfig = { ...config, retry: { ...config.retry, maxRetries: 0 }, servers: [{ ...entry, enabled: true }] };
  const redact = createRedactor(config.secrets);
  const context: HostContext = { cwd: env.cwd, agentDir: env.agentDir, privateDir, config: single, redact, truncate: (text) => ({ text, truncated: false }), services: TEST_SERVICES };
  // Loaded on use: the configuration commands should not pay for the protocol stack.
  const { McpHost } = await import("../runtime/host.ts");
  const host = new McpHost(await env.createKernel(config), context, { register() {}, deactivate() {} });
  const started = performance.now();
  try {
    await host.startAndSettle();
    const connectMs = Math.round(performance.now() - started);
    const connection = host.connection(name)!;
    const status = connection.status();
    if (status.state !== "connected") return failed(name, connectMs, status.cause ?? status.state);
    const problems: string[] = [];
    const counts = await connection.catalogCounts((problem) => problems.push(problem));
    return {
      ...(problems.length > 0 && { [LIST_PROBLEMS]: problems }),
      name,
      ok: true,
      protocolVersion: status.protocolVersion ?? null,
      serverInfo: status.serverInfo ?? null,
      ...counts,
      connectMs,
      error: null,
    };
  } catch (error) {
    return failed(name, Math.round(performance.now() - started), safeText(describeError(error), redact));
  } finally {
    await host.shutdown();
    await rm(privateDir, { recursive: true, force: true });
  }
}

function failed(name: string, connectMs: number, error: string): TestedServer {
  return { name, ok: false, protocolVersion: null, serverInfo: null, tools: 0, resources: 0, resourceTemplates: 0, prompts: 0, connectMs, error };
}

export function formatTested(server: TestedServer): string {
  if (!server.ok) return `✗ ${server.name}: ${server.error} (${server.connectMs} ms)`;
  const info = server.serverInfo ? `${server.serverInfo.name} ${server.serverInfo.version}` : "unknown server";
  const line = `✓ ${server.name}: ${info}, protocol ${server.protocolVersion}, ${server.tools} tools, ${server.resources} resources, ${server.resourceTemplates} templates, ${server.prompts} prompts (${server.connectMs} ms)`;
  // Pi keeps such a server too: only that listing fails there.
  const problems = server[LIST_PROBLEMS] ?? [];
  return problems.length === 0 ? line : `${line}\n  counted 0 (Pi keeps the server; only this listing fails): ${problems.join("; ")}`;
}

function requireRuntime(env: CommandEnvironment): RuntimeControl {
  if (!env.runtime) throw new PiMcpError("failed", "this command needs a running Pi session");
  return env.runtime;
}

export const statusCommand: CommandSpec = {
  name: "status",
  surfaces: ["pi"],
  summary: "Show live connection state, retries and causes",
  usage: "status",
  positionals: [],
  options: {},
  examples: [{ line: "status", description: "Every server's state, tool count, protocol, attempts and cause" }],
  async run(_input, env): Promise<CommandResult> {
    const { config, servers, extra = [] } = await requireRuntime(env).status();
    return { exitCode: 0, output: [formatStatus(config, servers), ...wrapColumns(extra)].join("\n") };
  },
};

export function formatStatus(config: EffectiveConfig, servers: readonly ConnectionStatus[]): string {
  if (!config.valid) {
    // The messages can quote what the files hold: redacted and stripped like every line a person is shown.
    const redact = createRedactor(config.secrets);
    const issues = config.issues.map((issue) => safeText(`  ${issue.path}: ${issue.message}`, redact).replace(/\n/g, " "));
    return wrapColumns(["MCP is disabled: the settings are invalid.", ...issues]).join("\n");
  }
  if (config.servers.length === 0) return "No MCP servers are configured.";
  const now = Date.now();
  const lines: string[] = [];
  for (const server of servers) {
    lines.push(`${server.name}: ${statusSummary(server, now)}`);
    if (server.roots !== undefined) lines.push(`  roots: ${describeRoots(server.roots)}`);
    if (server.cause && server.state !== "connected") lines.push(`  cause: ${server.cause}`);
  }
  return wrapColumns(lines).join("\n");
}

/** One live connection in a line: its state, then tools and protocol, reuse, attempts and the next retry. */
export function statusSummary(server: ConnectionStatus, now = Date.now()): string {
  const parts: string[] = [server.state];
  if (server.state === "connected") parts.push(`${server.tools} tools${exposureSummary(server.exposures)}`, `protocol ${server.protocolVersion ?? "?"}`);
  if (server.state === "connected" && server.reusedAt !== undefined && server.connectedAt !== undefined) {
    parts.push(`reused from an earlier session, connected ${Math.round((now - server.connectedAt) / 1000)} s ago`);
  }
  if (server.state === "idle") parts.push(`lazy: not running, ${server.tools} tools known; the first call starts it`);
  else if (server.lazy) parts.push(`lazy: closed after ${Math.round(server.lazy.idleTimeoutMs / 1000)} s unused`);
  if (server.attempts > 0 && server.state !== "connected") parts.push(`attempt ${server.attempts}`);
  if (server.nextRetryAt !== undefined) parts.push(`next retry in ${Math.max(0, Math.round((server.nextRetryAt - now) / 1000))} s`);
  return parts.join(", ");
}

/** "" when every tool is direct, else e.g. " (10 direct, 3 deferred)". */
function exposureSummary(exposures: ConnectionStatus["exposures"]): string {
  const entries = Object.entries(exposures).filter(([, count]) => count !== undefined && count > 0);
  if (entries.length === 0 || (entries.length === 1 && entries[0]![0] === "direct")) return "";
  return ` (${entries.map(([exposure, count]) => `${count} ${exposure}`).join(", ")})`;
}

export const reconnectCommand: CommandSpec = {
  name: "reconnect",
  surfaces: ["pi"],
  summary: "Reconnect one live server",
  usage: "reconnect <server>",
  positionals: [{ name: "server", description: "Server name", required: true }],
  options: {},
  examples: [{ line: "reconnect docs", description: "Close docs' connection and connect it anew (also after its retries ran out)" }],
  async run(input, env) {
    const name = input.positionals[0]!;
    await requireRuntime(env).reconnect(name);
    const server = (await requireRuntime(env).status()).servers.find((status) => status.name === name);
    return { exitCode: 0, output: `Reconnected "${name}": ${server?.state ?? "unknown"}${server?.cause ? ` (${server.cause})` : ""}` };
  },
};

export const waitCommand: CommandSpec = {
  name: "wait",
  surfaces: ["pi"],
  summary: "Wait until every server has connected or failed (for scripts: pi -p \"/mcp wait\" \"prompt\")",
  usage: "wait [--timeout MS]",
  positionals: [],
  options: { timeout: { type: "string", description: "Longest wait in milliseconds (default 30000)", valueHint: "MS" } },
  examples: [
    { line: "wait", description: "Wait up to 30 s; in scripts: pi -p \"/mcp wait\" \"your prompt\"" },
    { line: "wait --timeout 5000", description: "Wait at most 5 s (exit code 1 if a server is still connecting)" },
  ],
  async run(input, env) {
    const timeout = input.options.timeout === undefined ? 30_000 : Number(input.options.timeout);
    if (!Number.isInteger(timeout) || timeout < 0) throw new PiMcpError("usage", "wait: --timeout takes a whole number of milliseconds");
    const runtime = requireRuntime(env);
    const settled = await runtime.settled(timeout);
    const { config, servers } = await runtime.status();
    return { exitCode: settled ? 0 : 1, output: `${settled ? "" : `Still connecting after ${timeout} ms.\n`}${formatStatus(config, servers)}` };
  },
};

export const RUNTIME_COMMANDS: readonly CommandSpec[] = [testCommand, statusCommand, reconnectCommand, waitCommand];
