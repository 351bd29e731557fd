/*
 * MCP completion: `completion/complete` for prompt argument values, offered on
 * the kernel's `complete` hook (used by `/mcp prompt` argument completion in
 * Pi). Without this plugin nobody answers the hook and no server is asked; a
 * server that does not declare the `completions` capability is never asked.
 * Every failure (a timeout, an error, a malformed answer) just means no
 * suggestions.
 */
import { ANY_RESULT, isMethodNotFound } from "../../src/kernel/protocol.ts";
import { clientState } from "../../src/kernel/host-state.ts";
import type { Kernel, KernelPlugin } from "../../src/kernel/kernel.ts";
import type { CompletionRequest } from "../../src/kernel/types.ts";

/** The most values one completion offers (the protocol's own cap). */
export const MAX_COMPLETION_VALUES = 100;

export class CompletionPlugin implements KernelPlugin {
  readonly name = "completion";

  apply(kernel: Kernel): void {
    kernel.hooks.complete.tapPromise(this.name, (request) => suggestedValues(request));
  }
}

/**
 * Values a server suggests for one prompt argument, bounded by the server's
 * request timeout. Empty when the server cannot or does not answer.
 */
async function suggestedValues(request: CompletionRequest): Promise<string[]> {
  const { client } = request;
  try {
    if (!client.getServerCapabilities()?.completions) return [];
    const params = {
      ref: { type: "ref/prompt", name: request.prompt },
      argument: { name: request.argument, value: request.value },
      ...(request.context && Object.keys(request.context).length > 0 && { context: { arguments: { ...request.context } } }),
    };
    const result = (await client.request({ method: "completion/complete", params }, ANY_RESULT, {
      timeout: request.requestTimeoutMs,
      ...(request.signal && { signal: request.signal }),
    })) as { completion?: { values?: unknown } };
    const values = result?.completion?.values;
    if (!Array.isArray(values)) return [];
    return [...new Set(values.filter((value): value is string => typeof value === "string"))].slice(0, MAX_COMPLETION_VALUES);
  } catch (error) {
    // A server that declares completions but does not implement them (-32601) has none: said once per client.
    if (isMethodNotFound(error) && !notImplemented.has(client)) {
      notImplemented.set(client, true);
      request.log?.("[pi-mcp] the server does not implement completion/complete (-32601 Method not found): it has no suggestions\n");
    }
    return [];
  }
}

/** Clients whose server answered completion/complete with -32601. */
const notImplemented = clientState<true>("completion.not-implemented");
