import { stripTerminalControls } from "../safety/text.ts";
import { getCommand } from "./get.ts";
import { helpCommand } from "./help.ts";
import { importCommand } from "./import.ts";
import { listCommand } from "./list.ts";
import { addCommand, disableCommand, enableCommand, removeCommand } from "./manage.ts";
import { parseCommandArgs } from "./parse.ts";
import { executeCommand } from "./run.ts";
import { setupCommand } from "./setup.ts";
import type { CommandEnvironment, CommandResult, CommandSpec, Surface } from "../kernel/commands.ts";

/** The core's commands, in the order help lists them; the runtime's and the plugins' join through `commandsFor`'s `extra`. */
const CORE_COMMANDS: readonly CommandSpec[] = [
  setupCommand,
  listCommand,
  getCommand,
  addCommand,
  removeCommand,
  enableCommand,
  disableCommand,
  importCommand,
];

export function commandsFor(surface: Surface, extra: readonly CommandSpec[] = []): CommandSpec[] {
  return [...CORE_COMMANDS, ...extra].filter((command) => command.surfaces.includes(surface));
}

/**
 * Runs one `/mcp` command line (the words after `/mcp`): the command's spec
 * reads it (parse.ts, the grammar the program's commands use too) and runs it.
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
  return executeCommand(command, () => parseCommandArgs(command, rest, env.surface), env);
}

export { helpCommand };
export type { CommandEnvironment, CommandResult, CommandSpec, Surface };
