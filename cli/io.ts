import type { CommandResult } from "../src/kernel/commands.ts";
import type { Kernel } from "../src/kernel/kernel.ts";
import type { EffectiveConfig } from "../src/kernel/settings.ts";
import { terminalSafeJson } from "../src/safety/text.ts";

/** What a command line came to: the result, and whether JSON was asked for. */
export interface CliOutcome {
  readonly result: CommandResult;
  readonly json: boolean;
}

/** What the program reads and writes: the process's own, or a test's. */
export interface CliIo {
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  /** Whether standard output is a terminal: help has colour only there (and only without NO_COLOR). */
  readonly terminal: boolean;
  write(stream: "stdout" | "stderr", text: string): void;
  /** A kernel with every plugin the settings leave on, for the commands that connect (`test`, `setup`). */
  createKernel(config?: EffectiveConfig): Promise<Kernel>;
}

/** The process's arguments, streams and environment; the kernel is loaded only when a command connects. */
export function processIo(): CliIo {
  return {
    cwd: process.cwd(),
    env: process.env,
    terminal: process.stdout.isTTY === true,
    write: (stream, text) => void process[stream].write(text),
    createKernel: async (config) => (await import("../src/composition.ts")).createKernel(config ? { features: config.features } : {}),
  };
}

/** NO_COLOR (https://no-color.org): present and not empty turns colour off. */
export function wantsColor(io: CliIo): boolean {
  return io.terminal && !io.env.NO_COLOR;
}

/** Prints an outcome: JSON when asked for, a success or a report on stdout, anything else on stderr. */
export function printOutcome({ result, json }: CliOutcome, io: CliIo): void {
  if (json && result.json !== undefined) io.write("stdout", `${terminalSafeJson(result.json, 2)}\n`);
  else io.write(result.exitCode === 0 || result.report ? "stdout" : "stderr", `${result.output}\n`);
}
