import type { KernelPlugin } from "./kernel.ts";

/*
 * Third-party Pi extensions add plugins (result mappers, say) through the
 * public library. Pi loads each extension as its own module graph, so the
 * registry lives on globalThis under a well-known symbol that every copy of
 * pi-mcp shares.
 */
const REGISTRY = Symbol.for("pi-mcp.plugins");

type Registry = Map<string, KernelPlugin>;

function registry(): Registry {
  const global = globalThis as { [REGISTRY]?: Registry };
  global[REGISTRY] ??= new Map();
  return global[REGISTRY];
}

/** Adds a plugin to every pi-mcp host started from now on; a plugin of the same name is replaced. */
export function registerPlugin(plugin: KernelPlugin): () => void {
  registry().set(plugin.name, plugin);
  return () => {
    if (registry().get(plugin.name) === plugin) registry().delete(plugin.name);
  };
}

export function registeredPlugins(): KernelPlugin[] {
  return [...registry().values()];
}
