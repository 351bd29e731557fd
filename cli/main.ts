/**
 * The `pi-mcp` program: its subcommands, citty commands loaded only when run
 * (each is `cli/commands/<name>.ts`, one shared command spec each), plus the
 * conventions around them: `--version`/`-v`, `--help`/`-h` and
 * `help [command]`, and exit code 2 for every usage error.
 */
import { runCommand } from "citty";
import packageJson from "../package.json" with { type: "json" };
import { commandHelp, helpCommand, overviewHelp, usageLines, type HelpStyle } from "../src/commands/help.ts";
import { surfaceUsage } from "../src/kernel/commands.ts";
import { parseCommandArgs } from "../src/commands/parse.ts";
import { failure } from "../src/commands/run.ts";
import type { CommandResult } from "../src/kernel/commands.ts";
import { stripTerminalControls } from "../src/safety/text.ts";
import { wantsColor, type CliIo, type CliOutcome } from "./io.ts";
import type { SpecCommand } from "./spec-command.ts";

const load = (module: Promise<{ default: SpecCommand }>) => module.then((loaded) => loaded.default);

/** The subcommands, in the order help lists them; each module is imported only when its command runs. */
export const SUBCOMMANDS = {
  setup: () => load(import("./commands/setup.ts")),
  list: () => load(import("./commands/list.ts")),
  get: () => load(import("./commands/get.ts")),
  add: () => load(import("./commands/add.ts")),
  remove: () => load(import("./commands/remove.ts")),
  enable: () => load(import("./commands/enable.ts")),
  disable: () => load(import("./commands/disable.ts")),
  auth: () => load(import("./commands/auth.ts")),
  logout: () => load(import("./commands/logout.ts")),
  import: () => load(import("./commands/import.ts")),
  test: () => load(import("./commands/test.ts")),
} satisfies Record<string, () => Promise<SpecCommand>>;

const VERSION: string = packageJson.version;

const OVERVIEW = {
  title: `pi-mcp ${VERSION}: manage the MCP servers of the Pi coding agent (the "mcp" key of Pi's settings.json)`,
  usage: ["<command> [options]", "help [command]"],
  options: [
    ["-h, --help", "Show help (for a command: pi-mcp <command> --help)"],
    ["-v, --version", "Print pi-mcp's version"],
  ] as const,
  examples: [
    { line: "setup", description: "Move the servers of Pi's built-in MCP into pi-mcp and turn the built-in off" },
    { line: "add docs https://mcp.example.com/mcp", description: "Add a remote server" },
    { line: "list --json", description: "Every configured server, as JSON" },
  ],
  footer: "Run pi-mcp help <command> for a command's arguments, options and examples.",
};

type Name = keyof typeof SUBCOMMANDS;

function isCommand(name: string | undefined): name is Name {
  return name !== undefined && Object.hasOwn(SUBCOMMANDS, name);
}

const ok = (output: string): CommandResult => ({ exitCode: 0, output });
const usageError = (output: string): CommandResult => ({ exitCode: 2, output });

function unknownCommand(name: string): CommandResult {
  return usageError(
    `unknown command "${stripTerminalControls(name)}" (commands: ${Object.keys(SUBCOMMANDS).join(", ")})\nRun pi-mcp --help for usage.`,
  );
}

async function overview(style: HelpStyle): Promise<string> {
  const specs = await Promise.all(Object.values(SUBCOMMANDS).map(async (loadCommand) => (await loadCommand()).spec));
  return overviewHelp(specs, "cli", OVERVIEW, style);
}

/** `help [command]`'s grammar (the one `/mcp help` has); the program answers it itself, lazily and in colour. */
const HELP = helpCommand(() => []);

/**
 * Runs one command line and says what to print; writes nothing itself except
 * what a command shows while it runs (`auth` prints its URL, then waits).
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<CliOutcome> {
  const style: HelpStyle = { color: wantsColor(io), width: 80 };
  const dashes = argv.indexOf("--");
  // What follows `--` is a local server's command line: a --help there is its own.
  const head = dashes === -1 ? argv : argv.slice(0, dashes);
  const [name, ...rest] = argv;
  const text = (result: CommandResult): CliOutcome => ({ result, json: false });

  if (name === "--version" || name === "-v")
    return text(argv.length === 1 ? ok(VERSION) : usageError(`pi-mcp ${name} takes no arguments\nRun pi-mcp --help for usage.`));
  const helpAsked = head.includes("--help") || head.includes("-h");
  if (name === "help") {
    let topic: string | undefined;
    try {
      topic = parseCommandArgs(HELP, rest, "cli").positionals[0];
    } catch (error) {
      return withProgramUsage(text(failure(error)), HELP);
    }
    if (topic === undefined || topic === "help") return text(ok(await overview(style)));
    return text(isCommand(topic) ? ok(commandHelp((await SUBCOMMANDS[topic]()).spec, "cli", style)) : unknownCommand(topic));
  }
  if (name === undefined || name.startsWith("-")) {
    if (helpAsked) {
      // `pi-mcp --help add` is `pi-mcp add --help`, as gh takes it.
      const topic = head.find((arg) => !arg.startsWith("-"));
      return text(isCommand(topic) ? ok(commandHelp((await SUBCOMMANDS[topic]()).spec, "cli", style)) : ok(await overview(style)));
    }
    // On stderr: colour is decided for stdout, so this copy of the overview has none.
    return text(
      usageError(
        name === undefined
          ? `no command given\n${await overview({ ...style, color: false })}`
          : `unknown option ${stripTerminalControls(name)}\nRun pi-mcp --help for usage.`,
      ),
    );
  }
  if (!isCommand(name)) return text(unknownCommand(name));
  const command = await SUBCOMMANDS[name]();
  if (helpAsked) return text(ok(commandHelp(command.spec, "cli", style)));
  try {
    const { result } = await runCommand(command, { rawArgs: rest, data: io });
    return withProgramUsage(result as CliOutcome, command.spec);
  } catch (error) {
    return text(failure(error));
  }
}

/**
 * A usage error ends in the shared one-line usage (`usage: add [-l] <name> …`,
 * as `/mcp` shows it); in the program it is help's usage section instead:
 * with the program's name, within 80 columns, and where the rest is.
 */
function withProgramUsage(outcome: CliOutcome, spec: SpecCommand["spec"]): CliOutcome {
  const { result } = outcome;
  const shared = `\nusage: ${surfaceUsage(spec, "cli")}`;
  if (result.exitCode !== 2 || !result.output.endsWith(shared)) return outcome;
  const lines = [
    result.output.slice(0, -shared.length),
    "Usage:",
    ...usageLines(spec, "cli"),
    `Run pi-mcp help ${spec.name} for its arguments, options and examples.`,
  ];
  return { ...outcome, result: { ...result, output: lines.join("\n") } };
}
