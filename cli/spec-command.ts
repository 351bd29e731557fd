/**
 * One citty command from one shared command spec (src/commands): its
 * arguments are read by the spec's own grammar (src/commands/parse.ts, the
 * one `/mcp` uses too), and its run is the spec's run, the same one `/mcp`
 * runs. citty declares no arguments of its own for it, so it never reads the
 * command line differently.
 */
import { defineCommand, type CommandDef } from "citty";
import { cliCommandEnvironment } from "../src/commands/environment.ts";
import { credentialQueries } from "../plugins/auth-oauth/store.ts";
import { parseCommandArgs } from "../src/commands/parse.ts";
import { executeCommand } from "../src/commands/run.ts";
import type { CommandSpec } from "../src/kernel/commands.ts";
import { captureSdkConsole } from "../src/safety/sdk-output.ts";
import { printOutcome, processIo, type CliIo, type CliOutcome } from "./io.ts";

/** A citty command made from a spec; the program's help is drawn from the spec. */
export interface SpecCommand extends CommandDef {
  readonly spec: CommandSpec;
}

/**
 * The citty command for `spec`. Its run executes the spec with the program's
 * io (citty's `data`, from cli/main.ts); dispatched by citty alone (no data),
 * it uses the process's own and prints the outcome itself.
 */
export function specCommand(spec: CommandSpec): SpecCommand {
  const command = defineCommand({
    meta: { name: spec.name, description: spec.summary },
    async run({ rawArgs, data }): Promise<CliOutcome> {
      captureSdkConsole(); // the SDK's console output never reaches the terminal (see src/safety/sdk-output.ts)
      const io = (data as CliIo | undefined) ?? processIo();
      let json = false;
      const parse = () => {
        const input = parseCommandArgs(spec, rawArgs, "cli");
        json = input.options.json === true;
        return input;
      };
      const environment = cliCommandEnvironment(io.cwd, io.env, io.createKernel, {
        progress: (text) => io.write("stdout", `${text}\n`),
        credentials: credentialQueries,
      });
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
