import { parseArgs, type ParseArgsConfig } from "node:util";
import { usage, type CommandSpec, type OptionSpec, type ParsedInput, type Surface } from "../kernel/commands.ts";
import { ownValue } from "../safety/keys.ts";

/** Options every CLI command accepts: they override saved project trust for one run. */
const TRUST_OPTIONS: Readonly<Record<string, OptionSpec>> = {
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

type Values = Record<string, string | boolean | string[] | undefined>;

/**
 * The one grammar of every surface (`pi-mcp <command> …` and `/mcp <command> …`),
 * drawn from the command's spec: the options the surface takes (long, their
 * short letter, `-na`), positionals anywhere among them, and a bare `--` that
 * ends the options: what follows is kept verbatim for commands that take a
 * command line. Node's tokenizer splits the words (`--name=value`, `-la`); what
 * a command line may hold is decided here, with one wording on both surfaces:
 * an option the spec does not declare, a string option without its value (a
 * value that reads as one of the command's options is written `--name=-value`;
 * any other is taken as written), a switch given a value, then
 * the positionals and the `choices` (`checkedInput`).
 */
/** Whether `word` names one of `declared` (`--name`, `--name=…`, `--no-name` of a switch, `-x…` of a short letter, `-na`). */
function readsAsOption(word: string, declared: ReadonlyMap<string, OptionSpec>): boolean {
  if (word === "-" || !word.startsWith("-")) return false;
  if (word.startsWith("--")) {
    const name = word.slice(2).split("=", 1)[0]!;
    return declared.has(name) || (name.startsWith("no-") && declared.has(name.slice(3)));
  }
  if (ownValue(LONG_SHORTS, word) !== undefined) return true;
  return [...declared.values()].some((option) => option.short === word[1]);
}

export function parseCommandArgs(spec: CommandSpec, argv: readonly string[], surface: Surface): ParsedInput {
  const split = argv.indexOf("--");
  const head = (split === -1 ? argv : argv.slice(0, split)).map((arg) => ownValue(LONG_SHORTS, arg) ?? arg);
  const rest = split === -1 ? undefined : argv.slice(split + 1);
  if (rest && !spec.acceptsRest) throw usage(spec, "unexpected `--`", surface);
  const declared = new Map(surfaceOptions(spec, surface));
  const config: NonNullable<ParseArgsConfig["options"]> = {};
  for (const [name, option] of declared) config[name] = { type: option.type, ...(option.short && { short: option.short }) };
  const { tokens } = parseArgs({ args: head, options: config, allowPositionals: true, strict: false, tokens: true });
  const positionals: string[] = [];
  const options: Values = {};
  for (const token of tokens) {
    if (token.kind === "positional") positionals.push(token.value);
    if (token.kind !== "option") continue;
    const option = declared.get(token.name);
    if (option === undefined) {
      const hint = spec.acceptsRest && rest === undefined ? " (a local server's command line goes after --)" : "";
      throw usage(spec, `unknown option ${token.rawName}${hint}`, surface);
    }
    if (option.type === "boolean") {
      if (token.value !== undefined) throw usage(spec, `--${token.name} takes no value`, surface);
      options[token.name] = true;
      continue;
    }
    const value = token.value;
    if (value === undefined || value === "") throw usage(spec, `--${token.name} needs a value`, surface);
    // A value that reads as one of the command's options is that option: the value is missing. Any other value is taken
    // as written (an authorization code may start with -), and never quoted back: it may be a secret.
    if (!token.inlineValue && readsAsOption(value, declared)) {
      throw usage(spec, `--${token.name} needs a value (one that starts with - is written --${token.name}=<value>)`, surface);
    }
    const earlier = options[token.name];
    options[token.name] = option.multiple ? [...(Array.isArray(earlier) ? earlier : []), value] : value;
  }
  return checkedInput(spec, { positionals, options, rest }, surface);
}

/**
 * What every command line must hold once its words are read: the number of
 * positionals, and for options with `choices`, one of them.
 */
function checkedInput(spec: CommandSpec, input: ParsedInput, surface: Surface): ParsedInput {
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
    throw usage(spec, `--${name} takes one of: ${option.choices.join(", ")} (was "${value}")`, surface);
  }
  return input;
}
