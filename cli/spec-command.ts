/**
 * One citty command from one shared command spec (src/commands): citty's
 * arguments are generated from the spec's option table, citty parses the
 * command line, and its parse becomes the spec's input. The spec's run is the
 * same one `/mcp` runs.
 */
import { defineCommand, type ArgDef, type ArgsDef, type CommandDef, type ParsedArgs } from "citty";
import { cliCommandEnvironment } from "../src/commands/environment.ts";
import { credentialQueries } from "../plugins/auth-oauth/store.ts";
import { checkedInput, surfaceOptions } from "../src/commands/parse.ts";
import { usage } from "../src/kernel/commands.ts";
import { executeCommand } from "../src/commands/run.ts";
import type { CommandSpec, OptionSpec, ParsedInput } from "../src/kernel/commands.ts";
import { captureSdkConsole } from "../src/safety/sdk-output.ts";
import { printOutcome, processIo, type CliIo, type CliOutcome } from "./io.ts";

/** A citty command made from a spec; the program's help is drawn from the spec. */
export interface SpecCommand extends CommandDef {
  readonly spec: CommandSpec;
}

/** A spec boolean named `no-X` is citty's negated `X` (citty reads `--no-X` as `X: false`). */
function negated(name: string): string | undefined {
  return name.startsWith("no-") ? name.slice(3) : undefined;
}

/** citty's definition of the spec's arguments: positionals, then options (the CLI's trust options too). */
export function cittyArgs(spec: CommandSpec): ArgsDef {
  const args: ArgsDef = {};
  for (const positional of spec.positionals) {
    args[positional.name] = { type: "positional", description: positional.description, required: positional.required === true };
  }
  for (const [name, option] of surfaceOptions(spec, "cli")) {
    const off = negated(name);
    // `--no-X` needs only a boolean X; one the spec declares itself (approve) keeps its own definition.
    if (off === undefined) args[name] = optionArg(option);
    else args[off] ??= optionArg(option);
  }
  return args;
}

function optionArg(option: OptionSpec): ArgDef {
  const common = { description: option.description, ...(option.short && { alias: option.short }), ...(option.valueHint && { valueHint: option.valueHint }) };
  if (option.type === "boolean") return { type: "boolean", ...common };
  return option.choices ? { type: "enum", options: [...option.choices], ...common } : { type: "string", ...common };
}

/** `client-id` → `clientId`: citty accepts both spellings of a dashed option. */
function camel(name: string): string {
  return name.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());
}

/**
 * The spec's input from citty's parse. What citty leaves to its caller is
 * checked here: an option no spec declares (citty's parser is lenient), a
 * string option without a value, and the repeated values of a repeatable
 * option (citty keeps only the last one, so they are read from the raw
 * arguments citty handed the command).
 */
export function inputFromCitty(spec: CommandSpec, args: ParsedArgs, rawArgs: readonly string[]): ParsedInput {
  const dashes = rawArgs.indexOf("--");
  const rest = dashes === -1 ? undefined : rawArgs.slice(dashes + 1);
  if (rest && !spec.acceptsRest) throw usage(spec, "unexpected `--`", "cli");
  const declared = surfaceOptions(spec, "cli");
  rejectSwitchValues(spec, rawArgs.slice(0, dashes === -1 ? undefined : dashes), declared);
  rejectUndeclared(spec, args, declared, rest);
  const options: Record<string, string | boolean | string[] | undefined> = {};
  for (const [name, option] of declared) {
    const off = negated(name);
    if (option.type === "boolean") {
      options[name] = off === undefined ? args[name] === true || undefined : args[off] === false || undefined;
      continue;
    }
    const value = args[name];
    if (value === undefined) continue;
    if (typeof value !== "string" || value === "") throw usage(spec, `--${name} needs a value`, "cli");
    options[name] = option.multiple ? repeatedValues(rawArgs.slice(0, dashes === -1 ? undefined : dashes), name, declared) : value;
  }
  // After `--` everything is the local server's command line; citty lists it with the positionals.
  const positionals = args._.slice(0, args._.length - (rest?.length ?? 0));
  return checkedInput(spec, { positionals, options, rest }, "cli");
}

/**
 * Every key citty reports must be a positional, a declared option (or a
 * spelling citty derived from it: its short form, its camelCase form), or the
 * negated key of a declared `no-X` option (which only `--no-X` sets, to false).
 */
function rejectUndeclared(spec: CommandSpec, args: ParsedArgs, declared: readonly [string, OptionSpec][], rest: readonly string[] | undefined): void {
  const plain = new Set<string>(["_", ...spec.positionals.map((positional) => positional.name)]);
  const negatable = new Set<string>();
  for (const [name, option] of declared) {
    const off = negated(name);
    if (off !== undefined) for (const key of [off, camel(off)]) negatable.add(key);
    else for (const key of [name, camel(name), ...(option.short ? [option.short] : [])]) plain.add(key);
  }
  for (const [key, value] of Object.entries(args as Record<string, unknown>)) {
    if (plain.has(key) || (negatable.has(key) && value === false)) continue;
    const hint = spec.acceptsRest && rest === undefined ? " (a local server's command line goes after --)" : "";
    throw usage(spec, `unknown option ${key.length === 1 ? "-" : value === false ? "--no-" : "--"}${key}${hint}`, "cli");
  }
}

/**
 * A switch takes no value: citty reads `--dry-run=false` as false but
 * `--dry-run=no` and `--json=0` as true, so any `=value` on a boolean option
 * (or on the `--no-X` citty derives from it) is a usage error, as in `/mcp`.
 */
function rejectSwitchValues(spec: CommandSpec, head: readonly string[], declared: readonly [string, OptionSpec][]): void {
  const switches = new Map<string, string>();
  for (const [name, option] of declared) {
    if (option.type !== "boolean") continue;
    for (const spelling of [name, camel(name)]) switches.set(`--${spelling}`, name);
    if (negated(name) === undefined) for (const spelling of [name, camel(name)]) switches.set(`--no-${spelling}`, `no-${name}`);
  }
  for (const token of head) {
    const equals = token.startsWith("--") ? token.indexOf("=") : -1;
    const name = equals === -1 ? undefined : switches.get(token.slice(0, equals));
    if (name !== undefined) throw usage(spec, `--${name} takes no value`, "cli");
  }
}

/**
 * Every value of a repeatable option, in order: `--name VALUE`, `--name=VALUE`
 * or its short form, skipping the values of the other string options.
 */
function repeatedValues(head: readonly string[], wanted: string, declared: readonly [string, OptionSpec][]): string[] {
  const takesValue = new Map<string, string>();
  for (const [name, candidate] of declared) {
    if (candidate.type !== "string") continue;
    for (const flag of [`--${name}`, `--${camel(name)}`, ...(candidate.short ? [`-${candidate.short}`] : [])]) takesValue.set(flag, name);
  }
  const values: string[] = [];
  for (let index = 0; index < head.length; index++) {
    const token = head[index]!;
    const equals = token.startsWith("--") ? token.indexOf("=") : -1;
    const flag = equals === -1 ? token : token.slice(0, equals);
    const name = takesValue.get(flag);
    if (name === undefined) continue;
    const value = equals === -1 ? head[++index] : token.slice(equals + 1);
    if (name === wanted && value !== undefined) values.push(value);
  }
  return values;
}

/**
 * The citty command for `spec`. Its run executes the spec with the program's
 * io (citty's `data`, from cli/main.ts); dispatched by citty alone (no data),
 * it uses the process's own and prints the outcome itself.
 */
export function specCommand(spec: CommandSpec): SpecCommand {
  const command = defineCommand({
    meta: { name: spec.name, description: spec.summary },
    args: cittyArgs(spec),
    async run({ args, rawArgs, data }): Promise<CliOutcome> {
      captureSdkConsole(); // the SDK's console output never reaches the terminal (see src/safety/sdk-output.ts)
      const io = (data as CliIo | undefined) ?? processIo();
      let json = false;
      const parse = () => {
        const input = inputFromCitty(spec, args, rawArgs);
        json = input.options.json === true;
        return input;
      };
      const environment = cliCommandEnvironment(io.cwd, io.env, io.createKernel, { progress: (text) => io.write("stdout", `${text}\n`), credentials: credentialQueries });
      const outcome = { result: await executeCommand(spec, parse, environment), json };
      if (data === undefined) {
        printOutcome(outcome, io);
        process.exitCode = outcome.result.exitCode;
      }
      return outcome;
    },
  });
  return { ...command, spec };
}
