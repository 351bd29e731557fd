import { statSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import type { EffectiveConfig, ServerDefinition } from "../kernel/settings.ts";
import { hasReference } from "./expand.ts";

/**
 * The folders a server is given as its roots, or `false` when it gets no
 * roots capability at all. The server's own `roots` wins over the top-level
 * one; without either, a server gets Pi's working folder (the project folder).
 * Relative folders resolve against the project folder, `~` is the home folder.
 */
export function effectiveRoots(
  config: Pick<EffectiveConfig, "roots">,
  definition: ServerDefinition | undefined,
  projectDir: string,
): false | string[] {
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
  if (hasReference(folder)) return folder; // a variable that is not set (the settings say so): shown as written, not as a folder
  if (folder === "~") return homedir();
  if (folder.startsWith("~/")) return join(homedir(), folder.slice(2));
  return isAbsolute(folder) ? resolve(folder) : resolve(projectDir, folder);
}

/**
 * Why a `roots` entry is not a folder pi-mcp can send, or undefined. A URL
 * (`file:///etc`) would be taken as a folder name relative to the project,
 * and `~name` (another user's home) is not expanded: both are refused rather
 * than sent as a folder nobody meant.
 */
export function rootFolderProblem(folder: string): string | undefined {
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(folder) || /^file:/i.test(folder)) {
    return "must be a folder path, not a URL (write /etc, not file:///etc)";
  }
  if (/^~[^/]/.test(folder))
    return "must be a folder path: only ~ and ~/… mean your home folder (~name is not expanded; write the full path)";
  if (folder.includes("\u0000")) return "must not contain a NUL character";
  return undefined;
}

/** How a root folder is shown: as it is, with a note when there is no such folder (it is sent all the same). */
export function shownRootFolder(folder: string): string {
  return hasReference(folder) || statSync(folder, { throwIfNoEntry: false })?.isDirectory() ? folder : `${folder} (no such folder)`;
}

/** How `/mcp status` and `get` show a server's roots. */
export function describeRoots(roots: false | readonly string[]): string {
  if (roots === false) return "none (no roots capability)";
  return roots.length === 0 ? "an empty list (the roots capability, with no folder)" : roots.join(", ");
}
