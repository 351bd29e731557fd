import { PiMcpError, describeError } from "../kernel/errors.ts";
import { stripTerminalControls } from "../safety/text.ts";
import { authCommand, logoutCommand } from "./auth.ts";
import { importCommand } from "./import.ts";
import { listCommand } from "./list.ts";
import { addCommand, disableCommand, enableCommand, removeCommand } from "./manage.ts";
import { parseCommandArgs, surfaceUsage } from "./parse.ts";
import type { CommandEnvironment, CommandResult, CommandSpec, Surface } from "./types.ts";

/** Every command, in the order help lists them. Runtime commands join through `extraCommands`. */
export const CORE_COMMANDS: readonly CommandSpec[] = [listCommand, addCommand, removeCommand, enableCommand, disableCommand, authCommand, logoutCommand, importCommand];

export function commandsFor(surface: Surface, extra: readonly CommandSpec[] = []): CommandSpec[] {
  return [...CORE_COMMANDS, ...extra].filter((command) => command.surfaces.includes(surface));
}

export const helpCommand = (commands: () => readonly CommandSpec[]): CommandSpec => ({
  name: "help",
  surfaces: ["pi"],
  summary: "Show this help (queries no server)",
  usage: "help",
  positionals: [],
  options: {},
  async run() {
    const lines = ["/mcp commands:"];
    for (const command of commands()) lines.push(`  /mcp ${surfaceUsage(command, "pi").split("\n")[0]}`, `      ${command.summary}`);
    return { exitCode: 0, output: lines.join("\n") };
  },
});

/**
 * Runs one command line on a surface. Failures become results, never
 * exceptions: usage errors exit 2, every other failure exits 1 with one line.
 */
export async function runCommandLine(
  commands: readonly CommandSpec[],
  argv: readonly string[],
  env: CommandEnvironment,
): Promise<CommandResult> {
  const [name, ...rest] = argv;
  const command = commands.find((candidate) => candidate.name === name);
  if (!command) {
    const known = commands.map((candidate) => candidate.name).join(", ");
    return { exitCode: 2, output: name ? `unknown command "${stripTerminalControls(name)}" (commands: ${known})` : `commands: ${known}` };
  }
  try {
    const input = parseCommandArgs(command, rest, env.surface);
    const override = input.options["no-approve"] ? false : input.options.approve ? true : undefined;
    return await command.run(input, override !== undefined && env.withTrust ? env.withTrust(override) : env);
  } catch (error) {
    const code = error instanceof PiMcpError && error.code === "usage" ? 2 : 1;
    return { exitCode: code, output: stripTerminalControls(describeError(error)) };
  }
}

export type { CommandEnvironment, CommandResult, CommandSpec, Surface };
