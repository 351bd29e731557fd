import type { CommandSpec } from "../commands/types.ts";

export interface CompletionItem {
  readonly value: string;
  readonly label: string;
  readonly description?: string;
}

/** Commands whose first argument names a configured server. */
const TAKES_SERVER = new Set(["remove", "enable", "disable", "auth", "logout", "test", "reconnect", "prompt", "subscribe", "unsubscribe", "logs"]);

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
  if (!TAKES_SERVER.has(name ?? "")) return null;
  const typed = rest.filter((word) => !word.startsWith("-"));
  if (typed.length > 1) return null;
  const partial = rest[rest.length - 1] ?? "";
  const head = prefix.slice(0, prefix.length - partial.length);
  const items = servers.filter((server) => server.startsWith(partial)).map((server) => ({ value: `${head}${server}`, label: server }));
  return items.length > 0 ? items : null;
}
