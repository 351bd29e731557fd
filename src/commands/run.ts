import { PiMcpError, describeError } from "../kernel/errors.ts";
import { stripTerminalControls } from "../safety/text.ts";
import type { CommandEnvironment, CommandResult, CommandSpec, ParsedInput } from "../kernel/commands.ts";

/**
 * Runs one command with the input a surface's parser read (`parse` runs here,
 * so its usage errors are results too). Failures become results, never
 * exceptions: usage errors exit 2, every other failure exits 1 with one line.
 * The CLI's `--approve`/`--no-approve` decide the project's trust for this run.
 */
export async function executeCommand(command: CommandSpec, parse: () => ParsedInput, env: CommandEnvironment): Promise<CommandResult> {
  try {
    const input = parse();
    const override = input.options["no-approve"] ? false : input.options.approve ? true : undefined;
    return await command.run(input, override !== undefined && env.withTrust ? env.withTrust(override) : env);
  } catch (error) {
    return failure(error);
  }
}

/** A thrown error as a result: `usage` exits 2, anything else 1; the text is free of terminal controls. */
export function failure(error: unknown): CommandResult {
  const code = error instanceof PiMcpError && error.code === "usage" ? 2 : 1;
  return { exitCode: code, output: stripTerminalControls(describeError(error)) };
}
