import {
  listedAuth,
  type EffectiveConfig,
  type ExposureSetting,
  type Lifecycle,
  type ListedAuth,
  type ServerEntry,
} from "../kernel/settings.ts";
import { createRedactor, safeText } from "../safety/text.ts";
import { exposureOf, rootsOf, rootsText, targetOf } from "./describe.ts";
import { alignColumns } from "./text.ts";
import type { CommandEnvironment, CommandResult, CommandSpec } from "../kernel/commands.ts";
import { JSON_OPTION } from "./parse.ts";
import { formatTokens, knownCatalogTokens } from "../runtime/context-budget.ts";
import { settingsDigest } from "../config/settings-stamp.ts";

export interface ListedServer {
  readonly name: string;
  readonly scope: "global" | "project";
  readonly enabled: boolean;
  readonly masked: boolean;
  readonly transport: "stdio" | "http" | "sse";
  /** `oauth-on-demand`: a remote server without an `auth` setting (OAuth when the server asks), unlike an explicit `none`. */
  readonly auth: ListedAuth;
  readonly storedAuth: boolean;
  /** The server's default exposure (its own, else the top-level one). */
  readonly exposure: ExposureSetting;
  /** The estimated tokens of its tool definitions, from the catalog a Pi session recorded (null: none known). */
  readonly definitionTokens: number | null;
}

/** The `list --json` document: a contract, documented in the README. */
export interface ListDocument {
  readonly valid: boolean;
  readonly errors: readonly { readonly path: string; readonly message: string }[];
  readonly servers: readonly ListedServer[];
}

export const listCommand: CommandSpec = {
  name: "list",
  usage: "list [--json]",
  summary: "List effective server definitions without connecting",
  surfaces: ["cli", "pi"],
  positionals: [],
  options: { json: JSON_OPTION },
  examples: [
    { line: "list", description: "Every server: scope, state, transport, auth, exposure, roots, command or URL" },
    { line: "list --json", description: "The same as one JSON document", only: "cli" },
    { line: "list -a", description: "Including the project's servers, trusting the project for this run", only: "cli" },
  ],
  async run(input, env): Promise<CommandResult> {
    const config = await env.loadConfig();
    const document = await listDocument(config, env);
    return { exitCode: 0, output: formatList(document, config, env.cwd), ...(input.options.json ? { json: document } : {}) };
  },
};

async function listDocument(config: EffectiveConfig, env: CommandEnvironment): Promise<ListDocument> {
  const redact = createRedactor(config.secrets);
  const known = knownTokens(config, env);
  const servers = await Promise.all(
    config.servers.map(async (server) => listed(config, server, await storedAuth(server, env), known.get(server.name) ?? null)),
  );
  return {
    valid: config.valid,
    errors: config.issues.map((issue) => ({ path: issue.path, message: safeText(issue.message, redact) })),
    servers,
  };
}

/** Only credentials a connection would use count (see CredentialQueries). */
export function storedAuth(server: ServerEntry, env: CommandEnvironment): Promise<boolean> {
  return server.definition ? env.credentials.has(server.name, server.definition) : Promise.resolve(false);
}

/** Each server's estimated definition tokens from the recorded catalogs (never connecting; see knownCatalogTokens). */
export function knownTokens(config: EffectiveConfig, env: CommandEnvironment): Map<string, number> {
  const digest = settingsDigest({ agentDir: env.agentDir, cwd: env.cwd, trusted: config.sources.projectTrusted, env: env.env });
  return knownCatalogTokens(env.agentDir, digest);
}

/** `≈14,200` or `?` (no catalog recorded yet). */
export function tokensCell(tokens: number | null): string {
  return tokens === null ? "?" : `≈${formatTokens(tokens)}`;
}

function listed(config: EffectiveConfig, server: ServerEntry, storedAuth: boolean, definitionTokens: number | null): ListedServer {
  const { name, scope, enabled, masked, transport } = server;
  return {
    name,
    scope,
    enabled,
    masked,
    transport,
    auth: listedAuth(server),
    storedAuth,
    exposure: exposureOf(config, server),
    definitionTokens,
  };
}

/** Every line is redacted and stripped of terminal controls: names, paths and messages all come from files a person may not have read. */
function formatList(document: ListDocument, config: EffectiveConfig, projectDir: string): string {
  const redact = createRedactor(config.secrets);
  const entries = new Map(config.servers.map((server) => [server.name, server]));
  const lines: string[] = [];
  const project = config.sources.projectTrusted ? config.sources.projectPath : "not read (project not trusted)";
  lines.push(`global settings: ${config.sources.globalPath}`, `project settings: ${project}`);
  if (document.servers.length === 0) lines.push("No MCP servers are configured.");
  else
    lines.push(
      ...table(
        document.servers,
        (name) => entries.get(name)!,
        config,
        projectDir,
        (cell) => safeText(cell, redact).replace(/[\t\n]/g, " "),
      ),
    );
  if (!document.valid) {
    lines.push("", "Settings are invalid, so MCP is disabled:");
    for (const error of document.errors) lines.push(`  ${error.path}: ${error.message}`);
  }
  return lines.map((line) => safeText(line, redact)).join("\n");
}

/** When the server runs: its own `lifecycle`, else the top-level one. */
function lifecycleOf(config: EffectiveConfig, server: ServerEntry): Lifecycle {
  return server.definition?.lifecycle ?? config.lifecycle;
}

/** How the AUTH column names each kind. */
const AUTH_CELL: Readonly<Record<ListedAuth, string>> = {
  "oauth-on-demand": "oauth (on demand)",
  none: "none",
  bearer: "bearer",
  oauth: "oauth",
};

/** Cells are made safe before they are measured, so the columns line up with what is shown. */
function table(
  servers: readonly ListedServer[],
  entry: (name: string) => ServerEntry,
  config: EffectiveConfig,
  projectDir: string,
  safe: (cell: string) => string,
): string[] {
  return alignColumns([
    ["NAME", "SCOPE", "STATE", "TRANSPORT", "AUTH", "STORED AUTH", "EXPOSURE", "TOKENS", "ROOTS", "COMMAND/URL"],
    ...servers.map((server) =>
      [
        server.name,
        server.scope,
        server.masked
          ? "masked"
          : !server.enabled
            ? "disabled"
            : lifecycleOf(config, entry(server.name)) === "lazy"
              ? "enabled (lazy)"
              : "enabled",
        server.transport,
        AUTH_CELL[server.auth],
        server.storedAuth ? "yes" : "no",
        server.exposure,
        tokensCell(server.definitionTokens),
        // What a server would get as roots; a definition that did not validate shows the top-level setting.
        rootsText(rootsOf(config, entry(server.name), projectDir)),
        targetOf(entry(server.name)),
      ].map(safe),
    ),
  ]);
}
