import { definitionBinding } from "../auth/store.ts";
import { usesOAuth, type EffectiveConfig, type ServerEntry } from "../config/types.ts";
import { effectiveRoots, rootsConfigured } from "../config/roots.ts";
import { createRedactor, safeText } from "../safety/text.ts";
import type { CommandEnvironment, CommandResult, CommandSpec } from "./types.ts";

export interface ListedServer {
  readonly name: string;
  readonly scope: "global" | "project";
  readonly enabled: boolean;
  readonly masked: boolean;
  readonly transport: "stdio" | "http" | "sse";
  readonly auth: "none" | "bearer" | "oauth";
  readonly storedAuth: boolean;
}

/** The `list --json` document: a contract, documented in the README. */
export interface ListDocument {
  readonly valid: boolean;
  readonly errors: readonly { readonly path: string; readonly message: string }[];
  readonly servers: readonly ListedServer[];
}

export const listCommand: CommandSpec = {
  name: "list",
  surfaces: ["cli", "pi"],
  summary: "List effective server definitions without connecting",
  usage: "list [--json]",
  positionals: [],
  options: {
    json: { type: "boolean", description: "Print one JSON document", only: "cli" },
  },
  async run(input, env): Promise<CommandResult> {
    const config = await env.loadConfig();
    const document = await listDocument(config, env);
    return { exitCode: 0, output: formatList(document, config, env.cwd), ...(input.options.json ? { json: document } : {}) };
  },
};

export async function listDocument(config: EffectiveConfig, env: CommandEnvironment): Promise<ListDocument> {
  const redact = createRedactor(config.secrets);
  const servers = await Promise.all(config.servers.map(async (server) => listed(server, await storedAuth(server, env))));
  return {
    valid: config.valid,
    errors: config.issues.map((issue) => ({ path: issue.path, message: safeText(issue.message, redact) })),
    servers,
  };
}

/** Only credentials a connection would use count: an OAuth-capable definition, bound to its current URL and client. */
function storedAuth(server: ServerEntry, env: CommandEnvironment): Promise<boolean> {
  return usesOAuth(server.definition) ? env.credentials.has(server.name, definitionBinding(server.definition)) : Promise.resolve(false);
}

function listed(server: ServerEntry, storedAuth: boolean): ListedServer {
  const { name, scope, enabled, masked, transport, auth } = server;
  return { name, scope, enabled, masked, transport, auth, storedAuth };
}

/** Every line is redacted and stripped of terminal controls: names, paths and messages all come from files a person may not have read. */
function formatList(document: ListDocument, config: EffectiveConfig, projectDir: string): string {
  const redact = createRedactor(config.secrets);
  const exposure = new Map(config.servers.map((server) => [server.name, server.definition?.exposure ?? config.exposure]));
  // What a server would get as roots; a definition that did not validate shows the top-level setting.
  const roots = new Map(config.servers.map((server) => [server.name, rootsColumn(config, server, projectDir)]));
  const lines: string[] = [];
  const project = config.sources.projectTrusted ? config.sources.projectPath : "not read (project not trusted)";
  lines.push(`global settings: ${config.sources.globalPath}`, `project settings: ${project}`);
  if (document.servers.length === 0) lines.push("No MCP servers are configured.");
  else lines.push(...table(document.servers, exposure, roots, (cell) => safeText(cell, redact).replace(/[\t\n]/g, " ")));
  if (!document.valid) {
    lines.push("", "Settings are invalid, so MCP is disabled:");
    for (const error of document.errors) lines.push(`  ${error.path}: ${error.message}`);
  }
  return lines.map((line) => safeText(line, redact)).join("\n");
}

/** `cwd` (Pi's working folder, the default), `none` (no roots capability) or the folders. */
function rootsColumn(config: EffectiveConfig, server: ServerEntry, projectDir: string): string {
  if (!rootsConfigured(config, server.definition)) return "cwd";
  const roots = effectiveRoots(config, server.definition, projectDir);
  return roots === false ? "none" : roots.join(",");
}

/** Cells are made safe before they are measured, so the columns line up with what is shown. */
function table(servers: readonly ListedServer[], exposure: ReadonlyMap<string, string>, roots: ReadonlyMap<string, string>, safe: (cell: string) => string): string[] {
  const rows = [
    ["NAME", "SCOPE", "STATE", "TRANSPORT", "AUTH", "STORED AUTH", "EXPOSURE", "ROOTS"],
    ...servers.map((server) => [
      server.name,
      server.scope,
      server.masked ? "masked" : server.enabled ? "enabled" : "disabled",
      server.transport,
      server.auth,
      server.storedAuth ? "yes" : "no",
      exposure.get(server.name) ?? "direct",
      roots.get(server.name) ?? "cwd",
    ].map(safe)),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column]!)).join("  ").trimEnd());
}
