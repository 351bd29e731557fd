import { fileIssue } from "./files.ts";
import { readMcpSettings } from "./settings-read.ts";
import { globalSettingsPath, projectSettingsPath } from "./paths.ts";
import { resolveConfig, type ScopeSettings } from "./resolve.ts";
import { checkedShape } from "./shape-stamp.ts";
import type { EffectiveConfig, Scope } from "../kernel/settings.ts";
import { parseJson } from "../safety/keys.ts";

export interface LoadOptions {
  readonly agentDir: string;
  readonly cwd: string;
  /** Whether the project's settings may be read (Pi's trust, or the CLI's saved trust and flags). */
  readonly projectTrusted: boolean;
  readonly env?: NodeJS.ProcessEnv;
}

/** Reads both scopes and resolves the effective configuration. Never throws for bad content. */
export async function loadConfig(options: LoadOptions): Promise<EffectiveConfig> {
  const globalPath = globalSettingsPath(options.agentDir);
  const projectPath = projectSettingsPath(options.cwd);
  const global = await readScope("global", globalPath, options.agentDir);
  const project = options.projectTrusted ? await readScope("project", projectPath, options.agentDir) : undefined;
  return resolveConfig(global, project, options.env ?? process.env, {
    globalPath,
    projectPath,
    projectTrusted: options.projectTrusted,
  });
}

/** One scope's `mcp` settings as a session start reads them: the file, its `mcp` value and its shape check. */
export async function readScope(scope: Scope, file: string, agentDir: string): Promise<ScopeSettings> {
  const read = await readMcpSettings(file);
  if (read.problem) return { scope, file, mcp: undefined, readIssue: fileIssue(file, read.problem), shape: [] };
  if (read.mcpJson === undefined) return { scope, file, mcp: undefined, shape: [] };
  // A fresh copy for each load: what resolving does with it never reaches the next one.
  const mcp = parseJson(read.mcpJson);
  return { scope, file, mcp, shape: await checkedShape(agentDir, read.mcpJson, mcp, file) };
}
