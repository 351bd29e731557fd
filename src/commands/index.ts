import { PiMcpError } from "../kernel/errors.ts";
import { stripTerminalControls } from "../safety/text.ts";
import { getCommand } from "./get.ts";
import { commandHelp, commandList } from "./help.ts";
import { importCommand } from "./import.ts";
import { listCommand } from "./list.ts";
import { addCommand, disableCommand, enableCommand, removeCommand } from "./manage.ts";
import { parseCommandArgs } from "./parse.ts";
import { executeCommand } from "./run.ts";
import { setupCommand } from "./setup.ts";
import type { CommandEnvironment, CommandResult, CommandSpec, Surface } from "../kernel/commands.ts";

/** Every command, in the order help lists them. Runtime commands join through `extraCommands`. */
export const CORE_COMMANDS: readonly CommandSpec[] = [setupCommand, listCommand, getCommand, addCommand, removeCommand, enableCommand, disableCommand, importCommand];

export function commandsFor(surface: Surface, extra: readonly CommandSpec[] = []): CommandSpec[] {
  return [...CORE_COMMANDS, ...extra].filter((command) => command.surfaces.includes(surface));
}

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
      if (!command) throw new PiMcpError("usage", `help: unknown command "${stripTerminalControls(topic)}" (commands: ${commands().map((candidate) => candidate.name).join(", ")})`);
      return { exitCode: 0, output: commandHelp(command, "pi") };
    }
    const lines = ["/mcp commands:", ...commandList(commands(), "pi")];
    lines.push("", "/mcp help <command> shows a command's arguments, options and examples.");
    return { exitCode: 0, output: lines.join("\n") };
  },
});

/**
 * Runs one command line on a surface, parsed by the core's own parser (the
 * `/mcp` surface; the CLI parses with citty and calls `executeCommand`).
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

export type { CommandEnvironment, CommandResult, CommandSpec, Surface };
