/**
 * Places each host's fixture file where that host keeps it, inside a sandbox
 * (test/helpers/tmp.ts), and runs `import` through the shared command core.
 */
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { CommandEnvironment, CommandResult } from "../../src/commands/index.ts";
import type { ImportDocument } from "../../src/import/types.ts";
import { runCli, type Sandbox } from "../helpers/tmp.ts";

export const FIXTURES = fileURLToPath(new URL("./fixtures/", import.meta.url));

export const fixture = (name: string): Promise<string> => readFile(join(FIXTURES, name), "utf8");

/** Where each host keeps its files, for a sandbox whose HOME is its root. */
export function places(box: Sandbox) {
  return {
    piGlobal: join(box.agentDir, "mcp.json"),
    piProject: join(box.projectDir, ".pi", "mcp.json"),
    claude: join(box.projectDir, ".mcp.json"),
    cursorGlobal: join(box.root, ".cursor", "mcp.json"),
    cursorProject: join(box.projectDir, ".cursor", "mcp.json"),
    vscodeUserMcp: join(box.root, ".config", "Code", "User", "mcp.json"),
    vscodeUserSettings: join(box.root, ".config", "Code", "User", "settings.json"),
    vscodeWorkspace: join(box.projectDir, ".vscode", "mcp.json"),
  };
}

/** Copies every fixture into its host's place. */
export async function placeAll(box: Sandbox): Promise<void> {
  const at = places(box);
  const copies: [string, string][] = [
    ["pi-global.mcp.json", at.piGlobal],
    ["pi-project.mcp.json", at.piProject],
    ["claude.mcp.json", at.claude],
    ["cursor-global.mcp.json", at.cursorGlobal],
    ["cursor-project.mcp.json", at.cursorProject],
    ["vscode-user.mcp.json", at.vscodeUserMcp],
    ["vscode-user.settings.json", at.vscodeUserSettings],
    ["vscode-workspace.mcp.json", at.vscodeWorkspace],
  ];
  for (const [name, path] of copies) await box.writeText(path, await fixture(name));
}

export async function trustProject(box: Sandbox): Promise<void> {
  await box.trust({ [box.projectDir]: true });
}

/** `pi-mcp <argv>` on the CLI surface, in the sandbox's project, with `extra` in the environment. */
export function cli(box: Sandbox, argv: readonly string[], extra: Record<string, string> = {}): Promise<CommandResult> {
  return runCli(argv, box.projectDir, box.env(extra));
}

/** `import … --json` and its document. */
export async function importJson(
  box: Sandbox,
  argv: readonly string[],
  extra: Record<string, string> = {},
): Promise<{ result: CommandResult; document: ImportDocument }> {
  const result = await cli(box, ["import", ...argv, "--json"], extra);
  if (result.exitCode !== 0) throw new Error(`import failed (${result.exitCode}): ${result.output}`);
  return { result, document: result.json as ImportDocument };
}

export function definitionOf(document: ImportDocument, name: string): Record<string, unknown> | undefined {
  return document.imported.find((server) => server.name === name)?.definition;
}

export function reasonsOf(document: ImportDocument, name: string): readonly string[] | undefined {
  return document.skipped.find((server) => server.name === name)?.reasons;
}

/** Every file under `root` with its bytes (and every folder), for byte-for-byte comparisons. */
export async function snapshot(root: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (folder: string) => {
    for (const name of (await readdir(folder)).sort()) {
      const path = join(folder, name);
      if ((await stat(path)).isDirectory()) {
        out.set(path, "<dir>");
        await walk(path);
      } else {
        out.set(path, (await readFile(path)).toString("base64"));
      }
    }
  };
  await walk(root);
  return out;
}

export type { CommandEnvironment };
