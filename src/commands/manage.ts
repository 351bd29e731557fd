import { PiMcpError, describeError } from "../kernel/errors.ts";
import { assertWritable, changeServers, isMask, mutationTarget, notDefined, type Target } from "../config/mutate.ts";
import { usage } from "../kernel/commands.ts";
import type { CommandEnvironment, CommandResult, CommandSpec, OptionSpec, ParsedInput } from "../kernel/commands.ts";
import { keyedCopy, keyedRecord, isRecord } from "../safety/keys.ts";

const LOCAL: OptionSpec = { type: "boolean", short: "l", description: "Write the project's settings (needs saved trust)" };

export const addCommand: CommandSpec = {
  name: "add",
  surfaces: ["cli", "pi"],
  summary: "Add or replace a server: a remote one by its URL, a local one by its command line after --",
  usage:
    "add [-l] <name> <url> [--transport http|sse] [--header NAME=VALUE]... [--auth none|bearer|oauth] [--token T] [--client-id ID] [--client-secret S] [--redirect-uri URL] [--scope S]... [--root DIR]... [--no-roots]\n       add [-l] <name> [--cwd DIR] [--env NAME=VALUE]... [--root DIR]... [--no-roots] -- <command> [args...]",
  positionals: [
    { name: "name", description: "Server name", required: true },
    { name: "url", description: "Remote server URL (omit for a local command after --)" },
  ],
  acceptsRest: true,
  options: {
    local: LOCAL,
    transport: { type: "string", description: "Remote transport: http (default) or sse", valueHint: "http|sse", choices: ["http", "sse"] },
    header: { type: "string", multiple: true, description: "HTTP header, repeatable", valueHint: "NAME=VALUE" },
    auth: {
      type: "string",
      description: "Authentication: none, bearer or oauth",
      valueHint: "none|bearer|oauth",
      choices: ["none", "bearer", "oauth"],
    },
    token: { type: "string", description: "Bearer token (write ${VAR} to keep it out of the file)", valueHint: "TOKEN" },
    "client-id": { type: "string", description: "OAuth client id (or a Client ID Metadata Document URL)", valueHint: "ID" },
    "client-secret": { type: "string", description: "OAuth client secret", valueHint: "SECRET" },
    "redirect-uri": { type: "string", description: "OAuth loopback redirect URI", valueHint: "URL" },
    scope: { type: "string", multiple: true, description: "OAuth scope, repeatable", valueHint: "SCOPE" },
    environment: {
      type: "string",
      multiple: true,
      description: "Environment variable for a local server, repeatable",
      valueHint: "NAME=VALUE",
    },
    env: { type: "string", multiple: true, description: "Same as --environment", valueHint: "NAME=VALUE" },
    cwd: { type: "string", description: "Working folder of a local server", valueHint: "DIR" },
    exposure: {
      type: "string",
      description:
        "How the model reaches the tools: auto (the default: direct within the context budget), direct, deferred, codemode or hidden",
      valueHint: "MODE",
      choices: ["auto", "direct", "deferred", "codemode", "hidden"],
    },
    "tool-exposure": {
      type: "string",
      multiple: true,
      description: "Exposure for tools matching a glob, repeatable",
      valueHint: "GLOB=MODE",
    },
    root: {
      type: "string",
      multiple: true,
      description: "A folder the server gets as a root instead of Pi's working folder, repeatable",
      valueHint: "DIR",
    },
    "no-roots": { type: "boolean", description: "Declare no roots capability to the server" },
  },
  examples: [
    { line: "add docs https://mcp.example.com/mcp", description: "A remote server (Streamable HTTP; OAuth if the server asks for it)" },
    {
      line: "add gh https://api.example.com/mcp --auth bearer --token '${GH_TOKEN}'",
      description: "A remote server with a bearer token taken from the environment when used",
    },
    {
      line: "add files -- npx -y @modelcontextprotocol/server-filesystem /srv",
      description: "A local (stdio) server: its command line follows --",
    },
  ],
  async run(input, env) {
    const [name, url] = input.positionals as [string, string | undefined];
    const definition = {
      ...(url !== undefined ? remoteDefinition(input, url) : localDefinition(input)),
      ...exposureOptions(input),
      ...rootsOption(input),
    };
    const target = mutationTarget(input, env);
    await assertWritable(name, definition, target);
    let replaced = false;
    await changeServers(target, (servers) => {
      replaced = Object.hasOwn(servers, name);
      servers[name] = definition;
    });
    await env.runtime?.settingsChanged(name, "connect");
    const roots =
      definition.roots === undefined ? "" : ` (roots: ${definition.roots === false ? "none" : (definition.roots as string[]).join(", ")})`;
    return done(`${replaced ? "Replaced" : "Added"} ${target.scope} server "${name}" in ${target.file}${roots}`);
  },
};

function remoteDefinition(input: ParsedInput, url: string): Record<string, unknown> {
  if (input.rest) throw usage(addCommand, "give either <url> or `-- <command>`, not both");
  // `claude mcp add` takes a command where pi-mcp takes a URL; `${VAR}` may hold a URL.
  if (!url.includes("://") && !url.includes("${")) {
    throw usage(
      addCommand,
      `"${url}" is not a URL; a local server's command line goes after --: add ${input.positionals[0]} -- ${url} [args...]`,
    );
  }
  for (const local of ["cwd", "environment", "env"]) {
    if (input.options[local] !== undefined) throw usage(addCommand, `--${local} applies to local (command) servers only`);
  }
  const { transport, token } = input.options as Record<string, string | undefined>;
  const definition: Record<string, unknown> = { url };
  if (transport !== undefined) definition.transport = transport;
  const headers = pairs(input, "header");
  if (headers) definition.headers = headers;
  const auth = authOf(input, token);
  if (auth) definition.auth = auth;
  return definition;
}

function authOf(input: ParsedInput, token: string | undefined): Record<string, unknown> | undefined {
  const options = input.options as Record<string, string | string[] | undefined>;
  const oauthFields = {
    clientId: options["client-id"],
    clientSecret: options["client-secret"],
    redirectUri: options["redirect-uri"],
    scopes: options.scope,
  };
  const hasOAuthFields = Object.values(oauthFields).some((value) => value !== undefined);
  const type = (options.auth as string | undefined) ?? (token !== undefined ? "bearer" : hasOAuthFields ? "oauth" : undefined);
  if (type === undefined) return undefined;
  if (type !== "bearer" && token !== undefined) throw usage(addCommand, "--token goes with --auth bearer");
  if (type !== "oauth" && hasOAuthFields)
    throw usage(addCommand, "--client-id, --client-secret, --redirect-uri and --scope go with --auth oauth");
  if (type === "bearer") {
    if (token === undefined) throw usage(addCommand, "--auth bearer needs --token");
    return { type, token };
  }
  if (type === "oauth") {
    return { type, ...Object.fromEntries(Object.entries(oauthFields).filter(([, value]) => value !== undefined)) };
  }
  return { type };
}

function localDefinition(input: ParsedInput): Record<string, unknown> {
  const [command, ...args] = input.rest ?? [];
  if (command === undefined) throw usage(addCommand, "give a <url>, or `-- <command> [args...]` for a local server");
  for (const remote of ["transport", "header", "auth", "token", "client-id", "client-secret", "redirect-uri", "scope"]) {
    if (input.options[remote] !== undefined) throw usage(addCommand, `--${remote} applies to remote (url) servers only`);
  }
  const definition: Record<string, unknown> = { command };
  if (args.length > 0) definition.args = args;
  if (typeof input.options.cwd === "string") definition.cwd = input.options.cwd;
  const environment = keyedCopy({ ...pairs(input, "environment"), ...pairs(input, "env") });
  if (Object.keys(environment).length > 0) definition.environment = environment;
  return definition;
}

/** `--exposure` and `--tool-exposure GLOB=MODE` apply to local and remote servers alike. */
function exposureOptions(input: ParsedInput): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (typeof input.options.exposure === "string") out.exposure = input.options.exposure;
  const perTool = pairs(input, "tool-exposure");
  if (perTool) out.toolExposure = perTool;
  return out;
}

/** `--root DIR`… (stored as written: relative folders resolve against the project folder when used) or `--no-roots`. */
function rootsOption(input: ParsedInput): { roots?: false | string[] } {
  const folders = input.options.root as string[] | undefined;
  if (input.options["no-roots"]) {
    if (folders !== undefined) throw usage(addCommand, "give --root or --no-roots, not both");
    return { roots: false };
  }
  return folders === undefined ? {} : { roots: folders };
}

/** Collects repeated `NAME=VALUE` options into an object. */
function pairs(input: ParsedInput, option: string): Record<string, string> | undefined {
  const values = input.options[option];
  if (!Array.isArray(values) || values.length === 0) return undefined;
  const out = keyedRecord<string>();
  for (const pair of values) {
    const at = pair.indexOf("=");
    // The value is not echoed back: it may be a secret typed the wrong way.
    if (at <= 0) throw usage(addCommand, `--${option} takes NAME=VALUE`);
    out[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return out;
}

export const removeCommand: CommandSpec = {
  name: "remove",
  surfaces: ["cli", "pi"],
  summary: "Remove a server definition",
  usage: "remove [-l] [--logout] <server>",
  positionals: [{ name: "server", description: "Server name", required: true }],
  options: { local: LOCAL, logout: { type: "boolean", description: "Also remove the server's stored credentials" } },
  examples: [
    { line: "remove docs", description: "Remove the global definition of docs" },
    { line: "remove -l docs", description: "Remove the project's definition (the global one, if any, applies again)" },
    { line: "remove --logout docs", description: "Also remove its stored OAuth credentials" },
  ],
  async run(input, env) {
    const name = input.positionals[0]!;
    const target = mutationTarget(input, env);
    await changeServers(target, (servers) => {
      if (!Object.hasOwn(servers, name)) throw notDefined(name, target);
      delete servers[name];
    });
    await env.runtime?.settingsChanged(name, "disconnect");
    const removed = `Removed ${target.scope} server "${name}"`;
    let loggedOut = false;
    try {
      loggedOut = input.options.logout ? await env.credentials.remove(name) : false;
    } catch (error) {
      // The definition is gone already: say so, and why the credentials are still there.
      throw new PiMcpError("credential_store", `${removed} from ${target.file}, but not its stored credentials: ${describeError(error)}`);
    }
    const credentials = input.options.logout ? (loggedOut ? " and its stored credentials" : " (it had no stored credentials)") : "";
    return done(`${removed}${credentials} from ${target.file}`);
  },
};

function toggleCommand(enable: boolean): CommandSpec {
  const name = enable ? "enable" : "disable";
  return {
    name,
    surfaces: ["cli", "pi"],
    summary: enable ? "Enable a server" : "Disable a server",
    usage: `${name} [-l] <server>`,
    positionals: [{ name: "server", description: "Server name", required: true }],
    options: { local: LOCAL },
    examples: [
      { line: `${name} docs`, description: `${enable ? "Enable" : "Disable"} the global definition of docs` },
      {
        line: `${name} -l docs`,
        description: enable
          ? "Enable it in the project (removes a project mask)"
          : "Disable it in the project only (a mask, when docs is inherited)",
      },
    ],
    async run(input, env) {
      const server = input.positionals[0]!;
      const target = mutationTarget(input, env);
      const config = target.scope === "project" ? await env.loadConfig() : undefined;
      const inherited = config?.servers.some((entry) => entry.name === server);
      await changeServers(target, (servers) => setEnabled(servers, server, enable, target, inherited === true));
      await env.runtime?.settingsChanged(server, enable ? "connect" : "disconnect");
      return done(`${enable ? "Enabled" : "Disabled"} ${target.scope} server "${server}" in ${target.file}`);
    },
  };
}

/**
 * Enabling drops `enabled: false` (a project mask is removed entirely, which
 * reveals the global definition). Disabling a server the project only
 * inherits writes a mask `{ "enabled": false }` into the project file.
 */
function setEnabled(servers: Record<string, unknown>, name: string, enable: boolean, target: Target, known: boolean): void {
  const current = servers[name];
  if (!Object.hasOwn(servers, name)) {
    if (enable || target.scope !== "project" || !known) throw notDefined(name, target);
    servers[name] = { enabled: false };
    return;
  }
  if (current === null || isMask(current)) {
    if (enable) delete servers[name];
    return;
  }
  if (!isRecord(current)) throw new PiMcpError("invalid_settings", `mcp.servers.${name} in ${target.file} is not an object`);
  const next = { ...current };
  if (enable) delete next.enabled;
  else next.enabled = false;
  servers[name] = next;
}

export const enableCommand = toggleCommand(true);
export const disableCommand = toggleCommand(false);

function done(output: string): CommandResult {
  return { exitCode: 0, output };
}

export type { CommandEnvironment };
