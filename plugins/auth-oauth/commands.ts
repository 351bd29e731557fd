import type { AuthorizeOutcome } from "./flow.ts";
import { CredentialStore } from "./store.ts";
import { usesOAuth, type EffectiveConfig, type RemoteDefinition, type ServerEntry } from "../../src/kernel/settings.ts";
import { codeInCauses, describeError, PiMcpError } from "../../src/kernel/errors.ts";
import { createRedactor, safeText } from "../../src/safety/text.ts";
import type { CommandEnvironment, CommandResult, CommandSpec } from "../../src/kernel/commands.ts";

/** The credential store of a surface's agent folder (`<agentDir>/mcp-auth.json`). */
export function credentialStore(agentDir: string): CredentialStore {
  return new CredentialStore(agentDir);
}

function prefix(env: CommandEnvironment): string {
  return env.surface === "cli" ? "pi-mcp" : "/mcp";
}

async function validConfig(env: CommandEnvironment, command: string): Promise<EffectiveConfig> {
  const config = await env.loadConfig();
  if (!config.valid) {
    const reasons = config.issues.map((issue) => `${issue.path}: ${issue.message}`).join("; ");
    throw new PiMcpError("invalid_settings", safeText(`${command}: settings are invalid: ${reasons}`, createRedactor(config.secrets)));
  }
  return config;
}

/** The remote definition `auth` can authorize: OAuth, or no auth at all (discovery decides). */
function oauthDefinition(config: EffectiveConfig, name: string): { entry: ServerEntry; definition: RemoteDefinition } {
  const entry = config.servers.find((server) => server.name === name);
  if (!entry) throw new PiMcpError("not_found", `server "${name}" is not configured`);
  const definition = entry.definition;
  if (!definition)
    throw new PiMcpError("not_applicable", `server "${name}" is ${entry.masked ? "masked by the project settings" : "not usable"}`);
  if (definition.transport === "stdio")
    throw new PiMcpError("not_applicable", `server "${name}" is a local (stdio) server; OAuth applies to remote servers`);
  if (definition.auth && definition.auth.type !== "oauth") {
    throw new PiMcpError(
      "not_applicable",
      `server "${name}" uses auth type "${definition.auth.type}"; OAuth needs auth type "oauth" (or no auth setting)`,
    );
  }
  return { entry, definition };
}

export const authCommand: CommandSpec = {
  name: "auth",
  surfaces: ["cli", "pi"],
  summary: "Authorize pi-mcp for an OAuth server: prints the URL, opens a browser, waits for the loopback callback",
  usage: "auth <server> [--no-open] [--callback URL | --code CODE --state STATE]",
  positionals: [{ name: "server", description: "Server name", required: true }],
  options: {
    "no-open": { type: "boolean", description: "Only print the authorization URL (finish later with --callback or --code/--state)" },
    callback: { type: "string", description: "Complete a pending flow with the full URL the browser was sent to", valueHint: "URL" },
    code: { type: "string", description: "Complete a pending flow with the authorization code (with --state)", valueHint: "CODE" },
    state: { type: "string", description: "The state that came with --code", valueHint: "STATE" },
  },
  examples: [
    { line: "auth docs", description: "Print the authorization URL, open a browser, wait for the callback" },
    { line: "auth docs --no-open", description: "Only print the URL (on a remote or headless machine)" },
    {
      line: "auth docs --callback 'http://127.0.0.1:19876/mcp/oauth/callback?code=…&state=…'",
      description: "Finish a flow started with --no-open",
    },
  ],
  async run(input, env): Promise<CommandResult> {
    const name = input.positionals[0]!;
    const { callback, code, state } = input.options as Record<string, string | undefined>;
    if (callback !== undefined && (code !== undefined || state !== undefined)) {
      throw new PiMcpError("usage", `auth: give either --callback or --code with --state\nusage: ${authCommand.usage}`);
    }
    if ((code === undefined) !== (state === undefined))
      throw new PiMcpError("usage", `auth: --code and --state go together\nusage: ${authCommand.usage}`);
    const config = await validConfig(env, "auth");
    const { definition } = oauthDefinition(config, name);
    const store = credentialStore(env.agentDir);
    // Values typed on the command line and resolved from settings never come back in output.
    const typed = [callback, code, state].filter((value): value is string => value !== undefined);
    const redact = createRedactor([
      ...config.secrets,
      ...typed,
      ...(definition.auth?.type === "oauth" && definition.auth.clientSecret ? [definition.auth.clientSecret] : []),
    ]);
    const lines: string[] = [];
    const print = (text: string) => (env.progress ? env.progress(safeText(text, redact)) : lines.push(safeText(text, redact)));
    const open = !input.options["no-open"];
    // In Pi, what the SDK prints during the flow joins the server's retained log (the CLI keeps no log: it is dropped).
    const live = env.runtime ? (await env.runtime.host()).server(name) : undefined;
    let outcome: AuthorizeOutcome;
    try {
      const { authorize } = await import("./flow.ts");
      outcome = await authorize({
        server: name,
        definition,
        store,
        print,
        open,
        ...(callback !== undefined && { callbackUrl: callback }),
        ...(code !== undefined && { code }),
        ...(state !== undefined && { state }),
        connectTimeoutMs: definition.connectTimeoutMs ?? config.connectTimeoutMs,
        redact,
        ...(live && { sdkLog: (line: string) => live.log.append(`${line}\n`) }),
      });
    } catch (error) {
      throw new PiMcpError(
        codeInCauses(error, ["needs_client_registration", "credential_store"]) ?? "auth_failed",
        safeText(`auth ${name}: ${describeError(error)}`, redact),
        { cause: error },
      );
    }
    if (outcome.status === "pending") {
      const run = `${prefix(env)} auth ${name}`;
      lines.push(
        `Open this URL in a browser to authorize pi-mcp for "${name}":`,
        `  ${outcome.authorizationUrl}`,
        "Then finish with the full URL the browser was sent to (it may show an error page; copy its address):",
        `  ${run} --callback '<URL>'`,
        `or with the code and state from it: ${run} --code CODE --state STATE`,
      );
      return { exitCode: 0, output: lines.join("\n") };
    }
    lines.push(`Authorized "${name}"; its credentials are stored in ${store.path}`);
    if (env.runtime) {
      await env.runtime.reconnect(name);
      const status = (await env.runtime.status()).servers.find((server) => server.name === name);
      lines.push(
        `Reconnected "${name}": ${status?.state ?? "unknown"}${status?.cause && status.state !== "connected" ? ` (${status.cause})` : ""}`,
      );
    }
    return { exitCode: 0, output: lines.map((line) => safeText(line, redact)).join("\n") };
  },
};

export const logoutCommand: CommandSpec = {
  name: "logout",
  surfaces: ["cli", "pi"],
  summary: "Remove a server's stored OAuth credentials; --all --force resets the whole credential store",
  usage: "logout <server> | logout --all --force",
  positionals: [{ name: "server", description: "Server name" }],
  options: {
    all: { type: "boolean", description: "Remove every stored credential (needs --force)" },
    force: { type: "boolean", description: "Confirm --all; also resets a malformed credential store" },
  },
  examples: [
    { line: "logout docs", description: "Remove the stored OAuth credentials of docs" },
    { line: "logout --all --force", description: "Delete the whole credential store (also a malformed one)" },
  ],
  async run(input, env): Promise<CommandResult> {
    const name = input.positionals[0];
    const store = credentialStore(env.agentDir);
    if (input.options.all) {
      if (name !== undefined)
        throw new PiMcpError("usage", `logout: give a <server> or --all --force, not both\nusage: ${logoutCommand.usage}`);
      if (!input.options.force) {
        throw new PiMcpError(
          "usage",
          `logout: --all deletes every stored MCP credential (and a malformed ${store.path}); confirm with --force\nusage: ${logoutCommand.usage}`,
        );
      }
      const existed = await store.reset();
      await reconnectOAuthServers(env);
      return {
        exitCode: 0,
        output: existed ? `Removed every stored MCP credential (${store.path})` : `No MCP credentials were stored (${store.path})`,
      };
    }
    if (name === undefined) throw new PiMcpError("usage", `logout: missing <server> (or --all --force)\nusage: ${logoutCommand.usage}`);
    const removed = await store.remove(name);
    if (removed) await reconnectOAuthServers(env, name);
    return { exitCode: 0, output: removed ? `Removed the stored credentials of "${name}"` : `No credentials were stored for "${name}"` };
  },
};

/**
 * In a running Pi, clients that used removed credentials are replaced (they
 * come back as needs_auth). Only remote servers that may use OAuth are
 * affected: local processes and bearer servers keep running.
 */
async function reconnectOAuthServers(env: CommandEnvironment, only?: string): Promise<void> {
  if (!env.runtime) return;
  const { config, servers } = await env.runtime.status();
  const oauthServers = new Set(config.servers.filter((entry) => usesOAuth(entry.definition)).map((entry) => entry.name));
  for (const server of servers) {
    if ((only !== undefined && server.name !== only) || !oauthServers.has(server.name)) continue;
    if (server.state === "disabled") continue;
    await env.runtime.reconnect(server.name).catch(() => undefined);
  }
}
