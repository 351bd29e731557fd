import { Kernel, type KernelPlugin } from "./kernel/kernel.ts";
import type { CommandSpec } from "./commands/types.ts";

/**
 * The composition root: the one place that lists pi-mcp's internal plugins.
 * Users and tests switch features off by name, and may add plugins of their own.
 */
export interface KernelOptions {
  /** Names of internal plugins to leave out. */
  readonly disable?: readonly string[];
  /** Extra plugins (third-party result mappers, test doubles), applied after the internal ones. */
  readonly plugins?: readonly KernelPlugin[];
}

/** Internal plugins in the order they are applied. Each later issue adds its feature here. */
export function internalPlugins(): KernelPlugin[] {
  return [];
}

export function createKernel(options: KernelOptions = {}): Kernel {
  const disabled = new Set(options.disable ?? []);
  const internal = internalPlugins();
  for (const name of disabled) {
    if (!internal.some((plugin) => plugin.name === name)) throw new Error(`unknown internal plugin "${name}"`);
  }
  return new Kernel([...internal.filter((plugin) => !disabled.has(plugin.name)), ...(options.plugins ?? [])]);
}

/** Commands beyond the configuration core that the CLI offers (they need the runtime). */
export function cliExtraCommands(): CommandSpec[] {
  return [];
}
