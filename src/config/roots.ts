import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import type { EffectiveConfig, ServerDefinition } from "../kernel/settings.ts";

/**
 * The folders a server is given as its roots, or `false` when it gets no
 * roots capability at all. The server's own `roots` wins over the top-level
 * one; without either, a server gets Pi's working folder (the project folder).
 * Relative folders resolve against the project folder, `~` is the home folder.
 */
export function effectiveRoots(config: Pick<EffectiveConfig, "roots">, definition: ServerDefinition | undefined, projectDir: string): false | string[] {
  const setting = definition?.roots ?? config.roots;
  if (setting === false) return false;
  if (setting === undefined) return [resolve(projectDir)];
  return [...new Set(setting.map((folder) => rootFolder(folder, projectDir)))];
}

/** Whether roots are configured (per server or at the top level), rather than Pi's working folder by default. */
export function rootsConfigured(config: Pick<EffectiveConfig, "roots">, definition: ServerDefinition | undefined): boolean {
  return (definition?.roots ?? config.roots) !== undefined;
}

/**
 * A definition without its root folders: what identifies a connection, whose
 * roots can change while it stays open (`roots: false` changes its
 * capabilities, which are compared on their own).
 */
export function withoutRootFolders(definition: ServerDefinition): ServerDefinition {
  const { roots: _roots, ...rest } = definition;
  return rest as ServerDefinition;
}

function rootFolder(folder: string, projectDir: string): string {
  if (folder === "~") return homedir();
  if (folder.startsWith("~/")) return join(homedir(), folder.slice(2));
  return isAbsolute(folder) ? resolve(folder) : resolve(projectDir, folder);
}

/** How `list` and `/mcp status` show a server's roots. */
export function describeRoots(roots: false | readonly string[]): string {
  return roots === false ? "none (no roots capability)" : roots.join(", ");
}
