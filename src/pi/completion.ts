import type { CommandSpec, CompletionItem } from "../kernel/commands.ts";
import type { McpHost } from "../runtime/host.ts";
import { stripTerminalControls } from "../safety/text.ts";

export type { CompletionItem } from "../kernel/commands.ts";

/** Whether a command's first argument names a configured server. */
function takesServer(command: CommandSpec | undefined): boolean {
  return command?.positionals[0]?.name === "server";
}

/**
 * Completes `/mcp` arguments. Pi replaces the whole argument text with the
 * chosen item's value, so each value is the full argument line.
 */
export function completeArguments(prefix: string, commands: readonly CommandSpec[], servers: readonly string[]): CompletionItem[] | null {
  const words = prefix.split(/\s+/);
  if (words.length <= 1) {
    const items = commands
      .filter((command) => command.name.startsWith(words[0] ?? ""))
      .map((command) => ({ value: `${command.name} `, label: command.name, description: command.summary }));
    return items.length > 0 ? items : null;
  }
  const [name, ...rest] = words;
  if (!takesServer(commands.find((command) => command.name === name))) return null;
  const typed = rest.filter((word) => !word.startsWith("-"));
  if (typed.length > 1) return null;
  const partial = rest[rest.length - 1] ?? "";
  const head = prefix.slice(0, prefix.length - partial.length);
  const items = servers
    .filter((server) => server.startsWith(partial))
    .map((server) => ({ value: `${head}${server}`, label: stripTerminalControls(server) }));
  return items.length > 0 ? items : null;
}

/** Where live completion finds the session's host (absent before the session started). */
export type HostAccess = () => Promise<McpHost> | undefined;

/**
 * Completes `/mcp` arguments, asking the live session where static knowledge
 * ends: past its server, a command with its own `complete` (the prompt
 * command: prompt names, argument names and values) answers. Everything else
 * answers synchronously as `completeArguments` does; without a host (before
 * the session started) live completion offers nothing, and any failure yields
 * no suggestions.
 */
export function completeArgumentsLive(
  prefix: string,
  commands: readonly CommandSpec[],
  servers: readonly string[],
  host: HostAccess,
): CompletionItem[] | null | Promise<CompletionItem[] | null> {
  const [name, ...words] = prefix.split(/\s+/);
  const command = commands.find((candidate) => candidate.name === name);
  if (!command?.complete || words.length <= 1) return completeArguments(prefix, commands, servers);
  const ready = host();
  if (!ready) return null;
  const partial = words[words.length - 1] ?? "";
  const head = prefix.slice(0, prefix.length - partial.length);
  const complete = command.complete;
  return ready.then((current) => complete({ words, head, host: current })).catch(() => null);
}
