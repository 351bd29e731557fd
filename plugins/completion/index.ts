/*
 * MCP completion: `completion/complete` for prompt argument values, used by
 * `/mcp prompt` argument completion in Pi. Only clients built by a kernel
 * with this plugin ask servers for completions; a server that does not
 * declare the `completions` capability is never asked. Every failure (a
 * timeout, an error, a malformed answer) just means no suggestions.
 */
import { ANY_RESULT } from "../../src/runtime/paging.ts";
import type { Client } from "@modelcontextprotocol/client";
import type { Kernel, KernelPlugin } from "../../src/kernel/kernel.ts";
import type { ServerConnection } from "../../src/runtime/connection.ts";

/** The most values one completion offers (the protocol's own cap). */
export const MAX_COMPLETION_VALUES = 100;

/** Clients whose kernel has this plugin. */
const enabled = new WeakSet<Client>();

export class CompletionPlugin implements KernelPlugin {
  readonly name = "completion";

  apply(kernel: Kernel): void {
    kernel.hooks.clientCreated.tap(this.name, (live) => {
      enabled.add(live.client);
    });
  }
}

export interface PromptArgumentQuery {
  readonly prompt: string;
  readonly argument: string;
  /** What was typed of the value so far. */
  readonly value: string;
  /** Arguments already given, which servers may use to narrow the values. */
  readonly context?: Readonly<Record<string, string>>;
  readonly signal?: AbortSignal;
}

/**
 * Values a server suggests for one prompt argument, bounded by the server's
 * request timeout. Empty when the server cannot or does not answer.
 */
export async function completePromptArgument(connection: ServerConnection, query: PromptArgumentQuery): Promise<string[]> {
  try {
    if (connection.state !== "connected") return [];
    const client = connection.requireClient();
    if (!enabled.has(client) || !client.getServerCapabilities()?.completions) return [];
    const params = {
      ref: { type: "ref/prompt", name: query.prompt },
      argument: { name: query.argument, value: query.value },
      ...(query.context && Object.keys(query.context).length > 0 && { context: { arguments: { ...query.context } } }),
    };
    const result = (await client.request({ method: "completion/complete", params }, ANY_RESULT, {
      timeout: connection.requestTimeoutMs,
      ...(query.signal && { signal: query.signal }),
    })) as { completion?: { values?: unknown } };
    const values = result?.completion?.values;
    if (!Array.isArray(values)) return [];
    return [...new Set(values.filter((value): value is string => typeof value === "string"))].slice(0, MAX_COMPLETION_VALUES);
  } catch {
    return [];
  }
}
