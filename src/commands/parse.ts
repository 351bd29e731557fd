import { parseArgs, type ParseArgsConfig } from "node:util";
import { PiMcpError } from "../kernel/errors.ts";
import { usage, type CommandSpec, type OptionSpec, type ParsedInput, type Surface } from "../kernel/commands.ts";
import { ownValue } from "../safety/keys.ts";

/** Options every CLI command accepts: they override saved project trust for one run. */
export const TRUST_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  approve: { type: "boolean", short: "a", description: "Trust the project for this run", only: "cli" },
  "no-approve": { type: "boolean", description: "Do not trust the project for this run", only: "cli" },
};

/** `--json`: the CLI prints the command's document instead of its text. */
export const JSON_OPTION: OptionSpec = { type: "boolean", description: "Print one JSON document", only: "cli" };

/** Multi-letter short flags the spec names, mapped to their long forms. */
export const LONG_SHORTS: Readonly<Record<string, string>> = { "-na": "--no-approve" };

/** The options a command takes on a surface, the trust options included, in the order help lists them. */
export function surfaceOptions(spec: CommandSpec, surface: Surface): [string, OptionSpec][] {
  return Object.entries({ ...spec.options, ...TRUST_OPTIONS }).filter(([, option]) => option.only === undefined || option.only === surface);
}

/**
 * Parses one command's arguments with Node's own parser (the `/mcp`
 * surface; the CLI's parser is citty, see cli/spec-command.ts). A bare `--` ends the
 * options: what follows is kept verbatim for commands that take a command line.
 */
export function parseCommandArgs(spec: CommandSpec, argv: readonly string[], surface: Surface): ParsedInput {
  const split = argv.indexOf("--");
  const head = (split === -1 ? argv : argv.slice(0, split)).map((arg) => ownValue(LONG_SHORTS, arg) ?? arg);
  const rest = split === -1 ? undefined : argv.slice(split + 1);
  if (rest && !spec.acceptsRest) throw usage(spec, "unexpected `--`", surface);
  const options: NonNullable<ParseArgsConfig["options"]> = {};
  for (const [name, option] of surfaceOptions(spec, surface)) {
    options[name] = { type: option.type, ...(option.short && { short: option.short }), ...(option.multiple && { multiple: true }) };
  }
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: head, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw usage(spec, (error as Error).message.replace(/\. To specify a positional.*$/s, ""), surface);
  }
  return checkedInput(spec, { positionals: parsed.positionals, options: parsed.values as ParsedInput["options"], rest }, surface);
}

/**
 * What every surface checks of a parsed command line, whichever parser read
 * it: the number of positionals and the values of options with `choices`.
 */
export function checkedInput(spec: CommandSpec, input: ParsedInput, surface: Surface): ParsedInput {
  const required = spec.positionals.filter((positional) => positional.required).length;
  if (input.positionals.length < required) {
    throw usage(spec, `missing <${spec.positionals[input.positionals.length]?.name}>`, surface);
  }
  if (input.positionals.length > spec.positionals.length) {
    throw usage(spec, `unexpected argument "${input.positionals[spec.positionals.length]}"`, surface);
  }
  for (const [name, option] of Object.entries(spec.options)) {
    const value = input.options[name];
    if (option.choices === undefined || typeof value !== "string" || option.choices.includes(value)) continue;
    throw usage(spec, `--${name} takes ${choiceList(option.choices)} (was "${value}")`, surface);
  }
  return input;
}

/** `http or sse`, `none, bearer or oauth`. */
export function choiceList(choices: readonly string[]): string {
  return choices.length < 2 ? (choices[0] ?? "") : `${choices.slice(0, -1).join(", ")} or ${choices.at(-1)}`;
}

