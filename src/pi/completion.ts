import type { CommandSpec } from "../commands/types.ts";
import { completePromptArgument } from "../../plugins/completion/index.ts";
import { listPrompts, PROMPT_LIST_MAX_AGE_MS, type PromptArgument } from "../../plugins/prompts/index.ts";
import type { McpHost } from "../runtime/host.ts";
import { stripTerminalControls } from "../safety/text.ts";

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

/** Where live completion finds the session's host (absent before the session started). */
export type HostAccess = () => Promise<McpHost> | undefined;

/**
 * Completes `/mcp` arguments, asking the live session where static knowledge
 * ends: `prompt <server> <prompt> [--arg NAME=VALUE]...` completes prompt
 * names (prompts/list), argument names (the prompt's declared arguments) and
 * argument values (completion/complete, where the server supports it).
 * Everything else answers synchronously as `completeArguments` does. Live
 * lookups are bounded by the server's request timeout; any failure yields no
 * suggestions.
 */
export function completeArgumentsLive(
  prefix: string,
  commands: readonly CommandSpec[],
  servers: readonly string[],
  host: HostAccess,
): CompletionItem[] | null | Promise<CompletionItem[] | null> {
  const words = prefix.split(/\s+/);
  if (words[0] !== "prompt" || words.length <= 2 || !commands.some((command) => command.name === "prompt")) {
    return completeArguments(prefix, commands, servers);
  }
  const ready = host();
  if (!ready) return null;
  return completePrompt(prefix, words.slice(1), ready).catch(() => null);
}

async function completePrompt(prefix: string, rest: readonly string[], ready: Promise<McpHost>): Promise<CompletionItem[] | null> {
  const partial = rest[rest.length - 1] ?? "";
  const head = prefix.slice(0, prefix.length - partial.length);
  const typed = rest.slice(0, -1);
  const positionals: string[] = [];
  const given: Record<string, string> = {};
  let afterArg = false;
  for (const word of typed) {
    if (afterArg) {
      addPair(given, word);
      afterArg = false;
    } else if (word === "--arg") afterArg = true;
    else if (word.startsWith("--arg=")) addPair(given, word.slice("--arg=".length));
    else if (!word.startsWith("-")) positionals.push(word);
  }
  const [server, promptName] = positionals;
  if (server === undefined || positionals.length > 2) return null;
  const current = await ready;
  const connection = current.connection(server);
  if (!connection || connection.state !== "connected") return null;
  const prompts = await listPrompts(connection, { maxAgeMs: PROMPT_LIST_MAX_AGE_MS });
  if (promptName === undefined) {
    if (afterArg || partial.startsWith("-")) return null;
    return items(
      prompts
        .filter((prompt) => prompt.name.startsWith(partial))
        .map((prompt) => ({ value: `${head}${prompt.name}`, label: prompt.name, ...describe(prompt.title ?? prompt.description) })),
    );
  }
  const prompt = prompts.find((candidate) => candidate.name === promptName);
  if (!prompt) return null;
  const remaining = prompt.arguments.filter((arg) => !Object.hasOwn(given, arg.name));
  const argLabel = (arg: PromptArgument) => describe([arg.required ? "required" : "optional", arg.description].filter(Boolean).join(": "));
  if (!afterArg && !partial.startsWith("--arg=")) {
    // Nothing typed yet (or the start of an option): offer each remaining argument, required ones first.
    if (partial !== "" && !"--arg".startsWith(partial)) return null;
    const ordered = [...remaining].sort((a, b) => Number(b.required === true) - Number(a.required === true));
    return items(ordered.map((arg) => ({ value: `${head}--arg ${arg.name}=`, label: `--arg ${arg.name}=`, ...argLabel(arg) })));
  }
  const inline = partial.startsWith("--arg=") ? "--arg=" : "";
  const pair = partial.slice(inline.length);
  const split = pair.indexOf("=");
  if (split === -1) {
    return items(
      remaining.filter((arg) => arg.name.startsWith(pair)).map((arg) => ({ value: `${head}${inline}${arg.name}=`, label: `${arg.name}=`, ...argLabel(arg) })),
    );
  }
  const name = pair.slice(0, split);
  if (!prompt.arguments.some((arg) => arg.name === name)) return null;
  const value = pair.slice(split + 1).replace(/^["']/, "");
  const values = await completePromptArgument(connection, { prompt: prompt.name, argument: name, value, context: given });
  return items(values.map((suggestion) => ({ value: `${head}${inline}${name}=${quoteValue(suggestion)}`, label: suggestion })));
}

function addPair(given: Record<string, string>, pair: string): void {
  const split = pair.indexOf("=");
  if (split > 0) given[pair.slice(0, split)] = pair.slice(split + 1).replace(/^(["'])(.*)\1$/, "$2");
}

/** A value the command line reads back whole: quoted when it holds spaces or quotes. */
function quoteValue(value: string): string {
  if (value !== "" && !/[\s"'\\]/.test(value)) return value;
  return value.includes('"') ? `'${value}'` : `"${value}"`;
}

function describe(text: string | undefined): { description?: string } {
  const line = text?.split("\n")[0]?.trim();
  return line ? { description: stripTerminalControls(line).slice(0, 200) } : {};
}

function items(list: CompletionItem[]): CompletionItem[] | null {
  return list.length > 0 ? list : null;
}
