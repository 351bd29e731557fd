/**
 * What the resources plugin keeps for each host: the connected servers that
 * offer resources, the subscriptions live on each, and the notices already
 * queued. Every part of the plugin reaches it through `resourcesOf`.
 */
import type { McpSubscription } from "@modelcontextprotocol/client";
import { describeError } from "../../src/kernel/errors.ts";
import type { PluginHost } from "../../src/kernel/host.ts";
import { hostState } from "../../src/kernel/host-state.ts";
import type { LiveConnection } from "../../src/kernel/types.ts";

export interface ResourcesState {
  host?: PluginHost;
  /** server → its live connection, for each connected server that offers resources. */
  readonly connections: Map<string, LiveConnection>;
  /** server → URIs subscribed on the live connection. */
  readonly active: Map<string, Set<string>>;
  toolsDefined?: boolean;
  /** server → the `subscriptions/listen` stream carrying its subscriptions (2026-07-28 peers). */
  readonly streams: Map<string, McpSubscription>;
  /** `server\0uri` → when its last Resource Update Notice was queued. */
  readonly noticed: Map<string, number>;
  /** server → URI → why the live connection refused to subscribe it (the last attempt; a later success clears it). */
  readonly refused: Map<string, Map<string, string>>;
}

export const resourcesOf = hostState<ResourcesState>(() => ({
  connections: new Map(),
  active: new Map(),
  streams: new Map(),
  noticed: new Map(),
  refused: new Map(),
}));

/** Logs a failure of work for every server with resources (their subscriptions) to each server's retained log. */
export function logToAll(state: ResourcesState, what: string): (error: unknown) => void {
  return (error) => {
    for (const connection of state.connections.values()) connection.log(`[pi-mcp] ${what} failed: ${describeError(error)}\n`);
  };
}
