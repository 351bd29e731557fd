/**
 * Live completion of `prompt <server> <prompt> [--arg NAME=VALUE]...`: prompt
 * names (prompts/list), argument names (the prompt's declared arguments) and
 * argument values (the kernel's `complete` hook: completion/complete where a
 * plugin offers it and the server supports it). Lookups are bounded by the
 * server's request timeout; any failure yields no suggestions.
 */
import type { CompletionItem, LiveCompletionRequest } from "../../src/kernel/commands.ts";
import type { Redactor } from "../../src/kernel/types.ts";
import { safeHead, safeText } from "../../src/safety/text.ts";
import { listPrompts, PROMPT_LIST_MAX_AGE_MS, type PromptArgument } from "./catalog.ts";

export async function completePromptLine({ words, head, host }: LiveCompletionRequest): Promise<CompletionItem[] | null> {
  const partial = words[words.length - 1] ?? "";
  const typed = words.slice(0, -1);
  const positionals: string[] = [];
  // Typed names become keys: no prototype, so `__proto__` or `constructor` are ordinary names.
  const given: Record<string, string> = Object.create(null);
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
  const connection = host.server(server);
  if (connection?.state !== "connected") return null;
  const redact = host.context.redact;
  const describe = (text: string | undefined) => description(text, redact);
  const shown = (text: string) => safeText(text, redact);
  const prompts = await listPrompts(connection, { maxAgeMs: PROMPT_LIST_MAX_AGE_MS });
  if (promptName === undefined) {
    if (afterArg || partial.startsWith("-")) return null;
    return items(
      prompts
        .filter((prompt) => prompt.name.startsWith(partial))
        .map((prompt) => ({ value: `${head}${prompt.name}`, label: shown(prompt.name), ...describe(prompt.title ?? prompt.description) })),
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
    return items(ordered.map((arg) => ({ value: `${head}--arg ${arg.name}=`, label: shown(`--arg ${arg.name}=`), ...argLabel(arg) })));
  }
  const inline = partial.startsWith("--arg=") ? "--arg=" : "";
  const pair = partial.slice(inline.length);
  const split = pair.indexOf("=");
  if (split === -1) {
    return items(
      remaining
        .filter((arg) => arg.name.startsWith(pair))
        .map((arg) => ({ value: `${head}${inline}${arg.name}=`, label: shown(`${arg.name}=`), ...argLabel(arg) })),
    );
  }
  const name = pair.slice(0, split);
  if (!prompt.arguments.some((arg) => arg.name === name)) return null;
  const value = pair.slice(split + 1).replace(/^["']/, "");
  const client = await connection.connected();
  const request = {
    client,
    requestTimeoutMs: connection.requestTimeoutMs,
    prompt: prompt.name,
    argument: name,
    value,
    context: given,
    log: (text: string) => connection.log.append(text),
  };
  const values = await host.complete(request);
  return items(values.map((suggestion) => ({ value: `${head}${inline}${name}=${quoteValue(suggestion)}`, label: shown(suggestion) })));
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

/** The first line of a server's description, redacted and stripped before it is cut. */
function description(text: string | undefined, redact: Redactor): { description?: string } {
  const line = text === undefined ? undefined : safeText(text, redact).split("\n")[0]?.trim();
  return line ? { description: safeHead(line, redact, 200) } : {};
}

function items(list: CompletionItem[]): CompletionItem[] | null {
  return list.length > 0 ? list : null;
}
