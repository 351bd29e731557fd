/**
 * How `list` and `get` describe one server definition, from what is written
 * in the settings (`${NAME}` unexpanded) and the merged configuration.
 */
import { effectiveRoots, rootsConfigured } from "../config/roots.ts";
import type { EffectiveConfig, ExposureSetting, ServerEntry } from "../kernel/settings.ts";

/** A shell word as a person would type it: bare when it is plain, else single-quoted. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./~-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The command line (command and arguments as written) of a local server, or the URL of a remote one. */
export function targetOf(entry: Pick<ServerEntry, "written">): string {
  const { command, args, url } = entry.written;
  if (typeof url === "string") return url;
  if (typeof command !== "string") return "";
  const words = Array.isArray(args) ? args.map((arg) => (typeof arg === "string" ? arg : JSON.stringify(arg))) : [];
  return [command, ...words].map(shellWord).join(" ");
}

/** The server's default exposure: its own, else the top-level one (for a broken definition, what it says if that is an exposure). */
export function exposureOf(config: Pick<EffectiveConfig, "exposure">, entry: Pick<ServerEntry, "definition" | "written">): ExposureSetting {
  if (entry.definition?.exposure) return entry.definition.exposure;
  const written = entry.written.exposure;
  return written === "auto" || written === "direct" || written === "deferred" || written === "codemode" || written === "hidden"
    ? written
    : config.exposure;
}

/** What a server gets as roots: `cwd` (Pi's working folder, the default), `false` (no roots capability), or the folders. */
export function rootsOf(
  config: Pick<EffectiveConfig, "roots">,
  entry: Pick<ServerEntry, "definition">,
  projectDir: string,
): "cwd" | false | string[] {
  if (!rootsConfigured(config, entry.definition)) return "cwd";
  return effectiveRoots(config, entry.definition, projectDir);
}

/** The `ROOTS` column and the `roots` line: `cwd`, `none`, `empty` (an empty list), or the folders. */
export function rootsText(roots: "cwd" | false | readonly string[], separator = ","): string {
  if (roots === "cwd") return "cwd";
  if (roots === false) return "none";
  return roots.length === 0 ? "empty" : roots.join(separator);
}
