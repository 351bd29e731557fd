import { globalSettingsPath, projectSettingsPath } from "../config/paths.ts";
import { HOSTS } from "../import/sources.ts";
import type { ImportDocument } from "../import/types.ts";
import { stripTerminalControls, terminalSafeJson } from "../safety/text.ts";
import { maskLiterals } from "./literals.ts";
import { JSON_OPTION } from "./parse.ts";
import { usage } from "../kernel/commands.ts";
import type { CommandEnvironment, CommandSpec } from "../kernel/commands.ts";

const USAGE = "import [--from pi|claude|cursor|vscode|FILE] [-l] [--dry-run] [--json] [--replace]";

export const importCommand: CommandSpec = {
  name: "import",
  surfaces: ["cli", "pi"],
  summary: "Import server definitions from Pi's built-in MCP (mcp.json), Claude Code, Cursor, VS Code or an mcpServers file",
  usage: USAGE,
  positionals: [],
  options: {
    from: {
      type: "string",
      description: "Where to read: pi (default), claude, cursor, vscode, or a file path",
      valueHint: "pi|claude|cursor|vscode|FILE",
    },
    local: { type: "boolean", short: "l", description: "Write every definition to the project's settings (needs saved trust)" },
    "dry-run": { type: "boolean", description: "Write nothing; show exactly what would be written" },
    replace: { type: "boolean", description: "Overwrite definitions of the same name instead of reporting them" },
    json: JSON_OPTION,
  },
  examples: [
    { line: "import --dry-run", description: "Show what would be imported from Pi's built-in MCP (mcp.json)" },
    { line: "import --from claude -l", description: "Import Claude Code's .mcp.json into the project's settings" },
    { line: "import --from ~/servers.json --replace", description: "Import any mcpServers file, replacing definitions of the same name" },
  ],
  async run(input, env) {
    const from = input.options.from ?? "pi";
    if (typeof from !== "string" || from.trim() === "") throw usage(importCommand, `--from takes ${HOSTS.join(", ")} or a file path`);
    // The mappers and the shape check (arktype) they run are loaded only when an import runs.
    const { runImport } = await import("../import/run.ts");
    const document = await runImport(
      { from, local: input.options.local === true, dryRun: input.options["dry-run"] === true, replace: input.options.replace === true },
      env,
    );
    return { exitCode: 0, output: formatImport(document, env), ...(input.options.json ? { json: document } : {}) };
  },
};

/** Fields whose literal values are credentials as often as not: the text output does not echo them (--json does). */
const MASKED = "‹literal value, see --json›";

export function formatImport(document: ImportDocument, env: CommandEnvironment): string {
  const safe = stripTerminalControls;
  const files = { global: globalSettingsPath(env.agentDir), project: projectSettingsPath(env.cwd) };
  const lines: string[] = [];
  for (const source of document.sources) {
    const status = source.status === "read" ? "read" : source.status === "missing" ? "not found" : "not read: the project is not trusted";
    lines.push(`${safe(source.file)} (${source.scope}): ${status}`);
  }
  const total = document.imported.length + document.skipped.length + document.conflicts.length;
  if (total === 0) {
    lines.push("No server definitions found.");
    return lines.join("\n");
  }
  let masked = false;
  if (document.imported.length > 0) {
    lines.push("", document.dryRun ? "Would import (dry run: nothing was written):" : "Imported:");
    for (const scope of ["global", "project"] as const) {
      const batch = document.imported.filter((server) => server.scope === scope);
      if (batch.length === 0) continue;
      lines.push(`  into ${files[scope]} (mcp.servers):`);
      for (const server of batch) {
        const shown = maskLiterals(server.definition, MASKED);
        masked ||= shown.masked;
        lines.push(`    "${safe(server.name)}": ${indent(terminalSafeJson(shown.value, 2), "    ")}`);
        lines.push(`      from ${safe(server.source)}`);
        for (const note of server.notes) lines.push(`      note: ${safe(note)}`);
      }
    }
    if (masked) lines.push(`  (${MASKED} marks a value in environment, headers or auth that is written exactly as the source has it)`);
  } else if (document.dryRun) {
    lines.push("", "Dry run: nothing would be written.");
  }
  if (document.skipped.length > 0) {
    lines.push("", "Skipped (not imported):");
    for (const server of document.skipped) {
      lines.push(`  "${safe(server.name)}" from ${safe(server.source)}`);
      for (const reason of server.reasons) lines.push(`    ${safe(reason)}`);
    }
  }
  if (document.conflicts.length > 0) {
    lines.push("", "Conflicts (already defined differently; not overwritten, use --replace):");
    for (const server of document.conflicts)
      lines.push(`  "${safe(server.name)}" in ${server.scope} settings (${files[server.scope]}), from ${safe(server.source)}`);
  }
  return lines.join("\n");
}

function indent(text: string, prefix: string): string {
  return text.split("\n").join(`\n${prefix}`);
}
