import { readJsonFile, updateSettings } from "../config/files.ts";
import { globalSettingsPath } from "../config/paths.ts";
import { describeJsonType } from "../config/field-text.ts";
import { PiMcpError } from "../kernel/errors.ts";
import type { ImportDocument } from "../import/types.ts";
import { formatImport } from "./import.ts";
import { failedTest, formatTested, testServer, type TestedServer } from "./runtime.ts";
import type { CommandEnvironment, CommandResult, CommandSpec } from "../kernel/commands.ts";
import { JSON_OPTION } from "./parse.ts";

/** Pi's `extensions` entry that keeps its built-in MCP extension from loading. */
const BUILTIN_MCP_OFF = "-builtin:mcp";

/** What `setup` did to Pi's built-in MCP extension. */
export interface BuiltinChange {
  /** Pi's global settings file, whose `extensions` list holds the entry. */
  readonly file: string;
  /** `added` now, `present` already, or `would-add` (a dry run). */
  readonly change: "added" | "present" | "would-add";
}

/** The `setup --json` document (a contract, documented in the README). */
export interface SetupDocument {
  readonly dryRun: boolean;
  /** Exactly `import --from pi`'s document. */
  readonly import: ImportDocument;
  readonly builtin: BuiltinChange;
  /** `test` of every imported, enabled server (none in a dry run). */
  readonly tested: readonly TestedServer[];
}

export const setupCommand: CommandSpec = {
  name: "setup",
  surfaces: ["cli", "pi"],
  summary: "Move the servers of Pi's built-in MCP into pi-mcp, turn the built-in off, and test them",
  usage: "setup [--dry-run] [--json]",
  positionals: [],
  options: {
    "dry-run": { type: "boolean", description: "Change nothing and test nothing; show what would be done" },
    json: JSON_OPTION,
  },
  examples: [
    {
      line: "setup",
      description: "Import the servers of Pi's mcp.json, add \"-builtin:mcp\" to Pi's extensions, test the imported servers",
    },
    { line: "setup --dry-run", description: "Show what setup would import and change, without doing it" },
    { line: "setup --json", description: "Do it, and report as one JSON document", only: "cli" },
  ],
  async run(input, env): Promise<CommandResult> {
    const dryRun = input.options["dry-run"] === true;
    const settings = globalSettingsPath(env.agentDir);
    // An `extensions` value setup could not change stops it before the import writes anything.
    const present = await builtinEntryPresent(settings);
    // `import --from pi`'s rules exactly: the global mcp.json into global settings, a trusted project's into the project's.
    const { runImport } = await import("../import/run.ts"); // the mappers and their shape check, only when setup runs
    const imported = await runImport({ from: "pi", local: false, dryRun, replace: false }, env);
    const builtin = dryRun ? ({ file: settings, change: present ? "present" : "would-add" } as const) : await turnBuiltinOff(settings);
    const { tested, invalid } = dryRun ? { tested: [], invalid: [] } : await testImported(env, imported);
    const document: SetupDocument = { dryRun, import: imported, builtin, tested };
    const ok = tested.every((server) => server.ok);
    return { exitCode: ok ? 0 : 1, output: formatSetup(document, invalid, env), json: document, report: true };
  },
};

/**
 * Pi's `extensions` list, checked: a value that is not a list of strings is
 * Pi's to read, never pi-mcp's to replace.
 */
function extensionsList(file: string, data: Record<string, unknown>): readonly string[] {
  const extensions = data.extensions ?? [];
  const refuse = (path: string, problem: string) => new PiMcpError("invalid_settings", `${file}: ${path}: ${problem}; nothing was changed`);
  if (!Array.isArray(extensions)) throw refuse("extensions", `must be a list of strings (is ${describeJsonType(extensions)})`);
  const index = extensions.findIndex((entry) => typeof entry !== "string");
  if (index !== -1) throw refuse(`extensions[${index}]`, `must be a string (is ${describeJsonType(extensions[index])})`);
  return extensions as string[];
}

/** Whether Pi's global settings already turn the built-in MCP off (read only; refuses what it could not change). */
async function builtinEntryPresent(file: string): Promise<boolean> {
  const read = await readJsonFile(file);
  if (read.problem) throw new PiMcpError("unreadable_settings", `${file} ${read.problem}; nothing was changed`);
  return extensionsList(file, read.data ?? {}).includes(BUILTIN_MCP_OFF);
}

/**
 * Adds `-builtin:mcp` to the `extensions` list of Pi's global settings,
 * keeping every other entry (and every other key), with the same locked,
 * atomic write as every settings change; the list is checked again under the lock.
 */
async function turnBuiltinOff(file: string): Promise<BuiltinChange> {
  let present = false;
  await updateSettings(file, (data) => {
    const extensions = extensionsList(file, data);
    present = extensions.includes(BUILTIN_MCP_OFF);
    return present ? data : { ...data, extensions: [...extensions, BUILTIN_MCP_OFF] };
  });
  return { file, change: present ? "present" : "added" };
}

/** What the test of the imported servers came to; `invalid` holds the settings problems when none could be tested. */
interface ImportedTest {
  readonly tested: TestedServer[];
  readonly invalid: readonly string[];
}

/** Tests what was imported (and is enabled) against the settings as they are now, written. */
async function testImported(env: CommandEnvironment, imported: ImportDocument): Promise<ImportedTest> {
  const names = new Set(imported.imported.filter((server) => server.definition.enabled !== false).map((server) => server.name));
  if (names.size === 0) return { tested: [], invalid: [] };
  const config = await env.loadConfig();
  if (!config.valid) {
    const invalid = config.issues.map((issue) => `${issue.path}: ${issue.message}`);
    const error = `not tested: the settings are invalid: ${invalid.join("; ")}`;
    const tested = [...names].map((name) => failedTest(name, 0, error));
    return { tested, invalid };
  }
  const entries = config.servers.filter((entry) => names.has(entry.name) && entry.enabled);
  return { tested: await Promise.all(entries.map((entry) => testServer(env, config, entry.name))), invalid: [] };
}

function formatSetup(document: SetupDocument, invalid: readonly string[], env: CommandEnvironment): string {
  const { builtin, tested, dryRun } = document;
  const lines = [
    "Servers of Pi's built-in MCP (mcp.json):",
    ...formatImport(document.import, env)
      .split("\n")
      .map((line) => (line ? `  ${line}` : line)),
  ];
  lines.push("", "Pi's built-in MCP extension:");
  if (builtin.change === "present") lines.push(`  already off ("${BUILTIN_MCP_OFF}" is in extensions in ${builtin.file})`);
  else if (builtin.change === "would-add")
    lines.push(
      `  would be turned off: "${BUILTIN_MCP_OFF}" would be added to extensions in ${builtin.file} (dry run: nothing was written)`,
    );
  else
    lines.push(
      `  turned off: added "${BUILTIN_MCP_OFF}" to extensions in ${builtin.file}; Pi no longer warns that /mcp replaced it, from its next start`,
    );
  lines.push("", "Test of the imported servers:");
  if (dryRun) lines.push("  none (dry run)");
  else if (tested.length === 0) lines.push("  none: no enabled server was imported");
  // Settings that became invalid are one reason for every server: said once.
  else if (invalid.length > 0)
    lines.push(
      `  ✗ not tested (${tested.map((server) => server.name).join(", ")}): the settings are invalid:`,
      ...invalid.map((problem) => `    ${problem}`),
    );
  else lines.push(...tested.map((server) => `  ${formatTested(server)}`));
  return lines.join("\n");
}
