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
import { entryTimeouts } from "../config/timeouts.ts";
import { wrapColumns } from "./text.ts";
import { usage, type CommandEnvironment, type CommandResult, type CommandSpec, type RuntimeControl } from "../kernel/commands.ts";
import { JSON_OPTION } from "./parse.ts";
import { catalogTokens, contextText, formatTokens } from "../runtime/context-budget.ts";

export { wrapColumns } from "./text.ts";

/** The optional lists that failed for a server that connected (a symbol: shown in the text, not part of the `test --json` document). */
const LIST_PROBLEMS: unique symbol = Symbol("list problems");

/** One server in the `test --json` document (a contract, documented in the README). */

export interface TestedServer {
  readonly [LIST_PROBLEMS]?: readonly string[];
  readonly name: string;
  readonly ok: boolean;
  readonly protocolVersion: string | null;
  readonly serverInfo: { readonly name: string; readonly version: string } | null;
  readonly tools: number;
  /** The estimated tokens of its tool definitions (src/runtime/context-budget.ts; 0 when it failed). */
  readonly definitionTokens: number;
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
    if ((name === undefined) === !input.options.all) throw usage(testCommand, "name one <server>, or pass --all", env.surface);
    const config = await env.loadConfig();
    if (!config.valid) {
      const reasons = config.issues.map((issue) => `${issue.path}: ${issue.message}`).join("; ");
      throw new PiMcpError("invalid_settings", safeText(`settings are invalid: ${reasons}`, createRedactor(config.secrets)));
    }
    const entries = config.servers.filter((entry) => (name === undefined ? entry.enabled : entry.name === name));
    if (name !== undefined && entries.length === 0) throw new PiMcpError("not_found", `server "${name}" is not configured`);
    const servers = await Promise.all(entries.map((entry) => testServer(env, config, entry.name)));
    const ok = servers.every((server) => server.ok);
    const output =
      servers.length > 0
        ? servers.map(formatTested).join("\n")
        : `No enabled MCP servers to test (${env.surface === "cli" ? "pi-mcp" : "/mcp"} list shows the configured ones).`;
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
  model: { complete: () => Promise.reject(new PiMcpError("not_supported", "pi-mcp test answers no sampling request")) },
};

/** Connects one server with a throwaway host (always enabled, so a disabled server can be tested too). */
export async function testServer(env: CommandEnvironment, config: EffectiveConfig, name: string): Promise<TestedServer> {
  const privateDir = await mkdtemp(join(tmpdir(), "pi-mcp-test-"));
  const entry = config.servers.find((server) => server.name === name)!;
  if (entry.masked) return failedTest(name, 0, "masked by the project settings: there is no definition to connect");
  const single: EffectiveConfig = { ...config, retry: { ...config.retry, maxRetries: 0 }, servers: [{ ...entry, enabled: true }] };
  const redact = createRedactor(config.secrets);
  const context: HostContext = {
    cwd: env.cwd,
    agentDir: env.agentDir,
    privateDir,
    config: single,
    redact,
    truncate: (text) => ({ text, truncated: false }),
    services: TEST_SERVICES,
  };
  // Loaded on use: the configuration commands should not pay for the protocol stack.
  const { McpHost } = await import("../runtime/host.ts");
  const host = new McpHost(await env.createKernel(config), context, { register() {}, deactivate() {} });
  const started = performance.now();
  try {
    await host.startAndSettle();
    const connectMs = Math.round(performance.now() - started);
    const connection = host.server(name)!;
    const status = connection.status();
    if (status.state !== "connected") return failedTest(name, connectMs, status.cause ?? status.state);
    const problems: string[] = [];
    const counts = await connection.catalogCounts((problem) => problems.push(problem));
    return {
      ...(problems.length > 0 && { [LIST_PROBLEMS]: problems }),
      name,
      ok: true,
      protocolVersion: status.protocolVersion ?? null,
      serverInfo: status.serverInfo ?? null,
      ...counts,
      definitionTokens: catalogTokens(
        connection.catalog.tools.map(({ tool }) => tool),
        name,
      ),
      connectMs,
      error: null,
    };
  } catch (error) {
    return failedTest(name, Math.round(performance.now() - started), safeText(describeError(error), redact));
  } finally {
    await host.shutdown();
    await rm(privateDir, { recursive: true, force: true });
  }
}

/** A server `test` could not connect (or did not try: `error` says why). */
export function failedTest(name: string, connectMs: number, error: string): TestedServer {
  return {
    name,
    ok: false,
    protocolVersion: null,
    serverInfo: null,
    tools: 0,
    definitionTokens: 0,
    resources: 0,
    resourceTemplates: 0,
    prompts: 0,
    connectMs,
    error,
  };
}

export function formatTested(server: TestedServer): string {
  if (!server.ok) return `✗ ${server.name}: ${server.error} (${server.connectMs} ms)`;
  const info = server.serverInfo ? `${server.serverInfo.name} ${server.serverInfo.version}` : "unknown server";
  const line = `✓ ${server.name}: ${info}, protocol ${server.protocolVersion}, ${server.tools} tools, ${server.resources} resources, ${server.resourceTemplates} templates, ${server.prompts} prompts, ≈${formatTokens(server.definitionTokens)} tokens of tool definitions (${server.connectMs} ms)`;
  // Pi keeps such a server too: only that listing fails there.
  const problems = server[LIST_PROBLEMS] ?? [];
  return problems.length === 0 ? line : `${line}\n  counted 0 (Pi keeps the server; only this listing fails): ${problems.join("; ")}`;
}

function requireRuntime(env: CommandEnvironment): RuntimeControl {
  if (!env.runtime) throw new PiMcpError("needs_session", "this command needs a running Pi session");
  return env.runtime;
}

const statusCommand: CommandSpec = {
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
    const entry = config.servers.find((candidate) => candidate.name === server.name);
    const timeouts = entry && entryTimeouts(config, entry);
    if (timeouts?.cutFromMs !== undefined)
      lines.push(`  timeouts: requestTimeoutMs ${timeouts.cutFromMs} is cut to requestDeadlineMs ${timeouts.deadlineMs}`);
    if (server.roots !== undefined) lines.push(`  roots: ${describeRoots(server.roots)}`);
    if (server.context) lines.push(`  context: ${contextText(server.context)}`);
    if (server.cause && server.state !== "connected") lines.push(`  cause: ${server.cause}`);
  }
  const total = declaredTotal(servers);
  if (total) lines.push(total);
  return wrapColumns(lines).join("\n");
}

/** The line that sums up what MCP tool definitions cost every request, once some catalog is offered. */
function declaredTotal(servers: readonly ConnectionStatus[]): string | undefined {
  const placed = servers.flatMap((server) => (server.context ? [server.context] : []));
  if (placed.length === 0) return undefined;
  const declared = placed.reduce((sum, context) => sum + context.declared, 0);
  const all = placed.reduce((sum, context) => sum + context.tokens, 0);
  return `MCP tools: ≈${formatTokens(declared)} tokens declared per request, ≈${formatTokens(all)} in all`;
}

/** One live connection in a line: its state, then tools and protocol, reuse, attempts and the next retry. */
export function statusSummary(server: ConnectionStatus, now = Date.now()): string {
  const parts: string[] = [server.state];
  if (server.state === "connected")
    parts.push(`${server.tools} tools${exposureSummary(server.exposures)}`, `protocol ${server.protocolVersion ?? "?"}`);
  if (server.state === "connected" && server.reusedAt !== undefined && server.connectedAt !== undefined) {
    parts.push(`reused from an earlier session, connected ${Math.round((now - server.connectedAt) / 1000)} s ago`);
  }
  if (server.state === "idle") parts.push(`lazy: not running, ${server.tools} tools known; the first call starts it`);
  else if (server.lazy) parts.push(`lazy: closed after ${Math.round(server.lazy.idleTimeoutMs / 1000)} s unused`);
  if (server.attempts > 0 && server.state !== "connected") parts.push(`attempt ${server.attempts}`);
  if (server.nextRetryAt !== undefined) parts.push(`next retry in ${Math.max(0, Math.round((server.nextRetryAt - now) / 1000))} s`);
  if (server.noisy)
    parts.push(
      `noisy: ${server.noisy.notices} change notices in the last minute, re-listed at most every ${Math.round(server.noisy.relistIntervalMs / 1000)} s`,
    );
  return parts.join(", ");
}

/** "" when every tool is direct, else e.g. " (10 direct, 3 deferred)". */
function exposureSummary(exposures: ConnectionStatus["exposures"]): string {
  const entries = Object.entries(exposures).filter(([, count]) => count !== undefined && count > 0);
  // `auto` is counted only while the budget has not placed the server (its catalog is not offered): it is not a finding.
  if (entries.every(([exposure]) => exposure === "direct" || exposure === "auto")) return "";
  return ` (${entries.map(([exposure, count]) => `${count} ${exposure}`).join(", ")})`;
}

const reconnectCommand: CommandSpec = {
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

const waitCommand: CommandSpec = {
  name: "wait",
  surfaces: ["pi"],
  summary: 'Wait until every server has connected or failed (for scripts: pi -p "/mcp wait" "prompt")',
  usage: "wait [--timeout MS]",
  positionals: [],
  options: { timeout: { type: "string", description: "Longest wait in milliseconds (default 30000)", valueHint: "MS" } },
  examples: [
    { line: "wait", description: 'Wait up to 30 s; in scripts: pi -p "/mcp wait" "your prompt"' },
    { line: "wait --timeout 5000", description: "Wait at most 5 s (exit code 1 if a server is still connecting)" },
  ],
  async run(input, env) {
    const timeout = input.options.timeout === undefined ? 30_000 : Number(input.options.timeout);
    if (!Number.isInteger(timeout) || timeout < 0) throw new PiMcpError("usage", "wait: --timeout takes a whole number of milliseconds");
    const runtime = requireRuntime(env);
    const settled = await runtime.settled(timeout);
    const { config, servers } = await runtime.status();
    const connecting = servers.some((server) => server.state === "connecting" || server.state === "retrying");
    const late = connecting ? `Still connecting after ${timeout} ms.` : `Tool lists were still being re-listed after ${timeout} ms.`;
    return { exitCode: settled ? 0 : 1, output: `${settled ? "" : `${late}\n`}${formatStatus(config, servers)}` };
  },
};

export const RUNTIME_COMMANDS: readonly CommandSpec[] = [testCommand, statusCommand, reconnectCommand, waitCommand];
