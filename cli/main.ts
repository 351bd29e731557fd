import { defineCommand, type ArgsDef, type CommandDef } from "citty";
import { commandsFor, runCommandLine } from "../src/commands/index.ts";
import { TRUST_OPTIONS } from "../src/commands/parse.ts";
import type { CommandEnvironment, CommandResult, CommandSpec } from "../src/commands/types.ts";
import { cliCommandEnvironment } from "../src/commands/environment.ts";
import { RUNTIME_COMMANDS } from "../src/commands/runtime.ts";
import { captureSdkConsole } from "../src/safety/sdk-output.ts";

export interface CliOptions {
  /** The full argument vector after the program name, `--` and all. */
  readonly argv: readonly string[];
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Receives what the command printed and its exit code. */
  readonly onResult: (result: CommandResult, json: boolean) => void;
}

/**
 * The `pi-mcp` program: one citty subcommand per command of the shared core.
 * citty supplies `--help` and usage text; the core parses and runs.
 */
export function createCli(options: CliOptions): CommandDef {
  captureSdkConsole(); // the SDK's console output never reaches the terminal (see src/safety/sdk-output.ts)
  const commands = commandsFor("cli", RUNTIME_COMMANDS);
  const subCommands: Record<string, CommandDef> = {};
  for (const spec of commands) subCommands[spec.name] = subcommand(spec, commands, options);
  return defineCommand({
    meta: { name: "pi-mcp", description: "Manage the MCP servers of the Pi coding agent (pi-mcp's `mcp` settings)" },
    subCommands,
  });
}

export function listCommandNames(): string[] {
  return commandsFor("cli", RUNTIME_COMMANDS).map((command) => command.name);
}

function subcommand(spec: CommandSpec, commands: readonly CommandSpec[], options: CliOptions): CommandDef {
  return defineCommand({
    meta: { name: spec.name, description: spec.summary },
    args: argsDef(spec),
    async run() {
      const argv = options.argv.slice(options.argv.indexOf(spec.name));
      const env: CommandEnvironment = cliCommandEnvironment(options.cwd ?? process.cwd(), options.env ?? process.env, async () => (await import("../src/composition.ts")).createKernel());
      const result = await runCommandLine(commands, argv, env);
      options.onResult(result, argv.includes("--json") && !afterDashes(argv, "--json"));
    },
  });
}

function afterDashes(argv: readonly string[], flag: string): boolean {
  const dashes = argv.indexOf("--");
  return dashes !== -1 && argv.indexOf(flag) > dashes;
}

/** citty's view of a command's arguments, used for `--help` output only. */
function argsDef(spec: CommandSpec): ArgsDef {
  const args: ArgsDef = {};
  for (const positional of spec.positionals) {
    args[positional.name] = { type: "positional", description: positional.description, required: false };
  }
  for (const [name, option] of Object.entries({ ...spec.options, ...TRUST_OPTIONS })) {
    if (option.only === "pi") continue;
    args[name] = {
      type: option.type,
      description: option.description,
      ...(option.short && { alias: option.short }),
      ...(option.valueHint && { valueHint: option.valueHint }),
    };
  }
  return args;
}
