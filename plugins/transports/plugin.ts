import type { Transport } from "@modelcontextprotocol/client";
import type { RemoteDefinition, ServerDefinition, StdioDefinition } from "../../src/kernel/settings.ts";
import type { Kernel, KernelPlugin } from "../../src/kernel/kernel.ts";
import type { TransportContext, TransportHandle } from "../../src/kernel/types.ts";

type DefinitionOf<K extends ServerDefinition["transport"]> = K extends "stdio" ? StdioDefinition : RemoteDefinition;

/** A transport plugin answers `createTransport` for exactly one kind of definition. */
export function transportPlugin<K extends ServerDefinition["transport"]>(
  name: string,
  kind: K,
  create: (definition: DefinitionOf<K>, context: TransportContext) => Transport | TransportHandle,
): KernelPlugin {
  return {
    name,
    apply(kernel: Kernel) {
      kernel.hooks.createTransport.tapPromise(name, async (context) => {
        const definition = context.server.definition;
        if (definition?.transport !== kind) return undefined;
        const made = create(definition as DefinitionOf<K>, context);
        return "transport" in made ? made : { transport: made };
      });
    },
  };
}
