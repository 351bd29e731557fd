/**
 * Help text for both surfaces, drawn from the command specs: the CLI's
 * `--help` and `help [command]`, and `/mcp help [command]`. Plain text that
 * fits 80 columns with no trailing spaces; bold headings only when the
 * surface asks for colour (the CLI on a terminal without NO_COLOR).
 */
import { PiMcpError } from "../kernel/errors.ts";
import { stripTerminalControls } from "../safety/text.ts";
import { LONG_SHORTS, surfaceOptions } from "./parse.ts";
import { surfaceUsage } from "../kernel/commands.ts";
import { SURFACE_WIDTH, alignColumns, wrapLine } from "./text.ts";
import type { CommandExample, CommandSpec, OptionSpec, Surface } from "../kernel/commands.ts";

export interface HelpStyle {
  /** Bold headings (ANSI SGR). */
  readonly color: boolean;
  /** The widest a line may be. */
  readonly width: number;
}

const PLAIN_HELP: HelpStyle = { color: false, width: SURFACE_WIDTH.cli };

const plainHelp = (surface: Surface): HelpStyle => ({ color: false, width: SURFACE_WIDTH[surface] });

/** How commands are invoked on each surface. */
const PROGRAM: Readonly<Record<Surface, string>> = { cli: "pi-mcp", pi: "/mcp" };

/** A titled section: the heading, then its lines indented by two columns. */
function section(title: string, lines: readonly string[], style: HelpStyle): string[] {
  if (lines.length === 0) return [];
  return ["", style.color ? `\u001b[1m${title}\u001b[22m` : title, ...lines];
}

/** Two columns (a label, then its text) whose text wraps under itself. */
function table(rows: readonly (readonly [string, string])[], style: HelpStyle): string[] {
  const width = Math.max(...rows.map(([label]) => label.length));
  const hang = " ".repeat(2 + width + 2);
  return alignColumns(rows.map(([label, text]) => [`  ${label}`, text])).flatMap((line) => wrapLine(line, style.width, hang));
}

/** `-l, --local`, `--transport http|sse`, `-na, --no-approve`. */
function optionLabel(name: string, option: OptionSpec): string {
  const longShort = Object.entries(LONG_SHORTS).find(([, long]) => long === `--${name}`)?.[0];
  const short = option.short ? `-${option.short}, ` : longShort ? `${longShort}, ` : "";
  const value = option.type === "string" ? ` ${option.valueHint ?? option.choices?.join("|") ?? "VALUE"}` : "";
  return `${short}--${name}${value}`;
}

export function examplesFor(spec: CommandSpec, surface: Surface): CommandExample[] {
  return (spec.examples ?? []).filter((example) => example.only === undefined || example.only === surface);
}

/**
 * An example's command line, then its description. A command line too long
 * for one line continues further in than the description, words whole; in the
 * CLI each piece but the last ends in ` \`, so the example still pastes into a shell.
 */
function exampleLines(examples: readonly CommandExample[], surface: Surface, style: HelpStyle): string[] {
  const continued = surface === "cli" ? " \\" : "";
  return examples.flatMap((example) => {
    const command = wrapLine(`  ${PROGRAM[surface]} ${example.line}`, style.width - continued.length, "          ", "keep");
    return [
      ...command.map((piece, index) => (index < command.length - 1 ? `${piece}${continued}` : piece)),
      ...wrapLine(`      ${example.description}`, style.width, "      "),
    ];
  });
}

/** A usage line broken between its words and bracketed groups (`[--scope S]...` stays whole). */
function wrapUsage(line: string, width: number, continuation = "     "): string[] {
  const units = line.match(/\[[^\]]*\](?:\.\.\.)?|<[^>]*>(?:\.\.\.)?|\S+/g) ?? [];
  const out: string[] = [];
  let current = " ";
  for (const unit of units) {
    if (current.trim() !== "" && current.length + 1 + unit.length > width) {
      out.push(current);
      current = continuation;
    }
    current += ` ${unit}`;
  }
  out.push(current);
  return out;
}

/** A command's usage lines as help shows them: each with the program, wrapped to the width. */
export function usageLines(spec: CommandSpec, surface: Surface, style: HelpStyle = plainHelp(surface)): string[] {
  return surfaceUsage(spec, surface)
    .split("\n")
    .flatMap((line) => wrapUsage(`${PROGRAM[surface]} ${line.trim()}`, style.width));
}

/** One command's help: usage, arguments (`<required>`, `[optional]`), options and examples. */
export function commandHelp(spec: CommandSpec, surface: Surface, style: HelpStyle = plainHelp(surface)): string {
  const program = PROGRAM[surface];
  const usage = usageLines(spec, surface, style);
  const positionals = spec.positionals.map((positional): [string, string] => [
    positional.required ? `<${positional.name}>` : `[${positional.name}]`,
    positional.description,
  ]);
  const options = surfaceOptions(spec, surface).map(([name, option]): [string, string] => [optionLabel(name, option), option.description]);
  return [
    ...wrapLine(`${program} ${spec.name}: ${spec.summary}`, style.width, "  "),
    ...section("Usage:", usage, style),
    ...section("Arguments:", positionals.length > 0 ? table(positionals, style) : [], style),
    ...section("Options:", options.length > 0 ? table(options, style) : [], style),
    ...section("Examples:", exampleLines(examplesFor(spec, surface), surface, style), style),
  ].join("\n");
}

/** Every command's usage, each with its summary under it (`/mcp help`). */
function commandList(specs: readonly CommandSpec[], surface: Surface, style: HelpStyle = plainHelp(surface)): string[] {
  return specs.flatMap((spec) => [
    // Continued further in than the summary under it, so the two do not run together.
    ...wrapUsage(`${PROGRAM[surface]} ${surfaceUsage(spec, surface).split("\n")[0]!.trim()}`, style.width, "         "),
    ...wrapLine(`      ${spec.summary}`, style.width, "      "),
  ]);
}

export interface Overview {
  /** The first line: what the program is. */
  readonly title: string;
  readonly usage: readonly string[];
  /** Options of the program itself (`--help`, `--version`). */
  readonly options: readonly (readonly [string, string])[];
  readonly examples: readonly CommandExample[];
  readonly footer: string;
}

/** The program's help: its commands with their summaries, its own options, a few examples. */
export function overviewHelp(specs: readonly CommandSpec[], surface: Surface, overview: Overview, style: HelpStyle = PLAIN_HELP): string {
  const program = PROGRAM[surface];
  return [
    ...wrapLine(overview.title, style.width, "  "),
    ...section(
      "Usage:",
      overview.usage.map((line) => `  ${program} ${line}`),
      style,
    ),
    ...section(
      "Commands:",
      table(
        specs.map((spec): [string, string] => [spec.name, spec.summary]),
        style,
      ),
      style,
    ),
    ...section("Options:", overview.options.length > 0 ? table(overview.options, style) : [], style),
    ...section("Examples:", exampleLines(overview.examples, surface, style), style),
    "",
    ...wrapLine(overview.footer, style.width, ""),
  ].join("\n");
}

/** `/mcp help [command]`; the program's `help` (cli/main.ts) reads its arguments by this spec's grammar too. */
export const helpCommand = (commands: () => readonly CommandSpec[]): CommandSpec => ({
  name: "help",
  surfaces: ["pi"],
  summary: "Show this help, or one command's (queries no server)",
  usage: "help [command]",
  positionals: [{ name: "command", description: "A command to show the arguments, options and examples of" }],
  options: {},
  examples: [
    { line: "help", description: "Every /mcp command" },
    { line: "help add", description: "The arguments, options and examples of add" },
  ],
  async run(input) {
    const topic = input.positionals[0];
    if (topic !== undefined) {
      const command = commands().find((candidate) => candidate.name === topic);
      if (!command)
        throw new PiMcpError(
          "usage",
          `help: unknown command "${stripTerminalControls(topic)}" (commands: ${commands()
            .map((candidate) => candidate.name)
            .join(", ")})`,
        );
      return { exitCode: 0, output: commandHelp(command, "pi") };
    }
    const lines = ["/mcp commands:", ...commandList(commands(), "pi")];
    lines.push("", "/mcp help <command> shows a command's arguments, options and examples.");
    return { exitCode: 0, output: lines.join("\n") };
  },
});
