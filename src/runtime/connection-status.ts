import type { Client } from "@modelcontextprotocol/client";
import { effectiveRoots, rootsConfigured, shownRootFolder } from "../config/roots.ts";
import type { ExposureSetting, Lifecycle, ServerEntry } from "../kernel/settings.ts";
import type { ConnectionState, ConnectionStatus } from "../kernel/status.ts";
import type { HostContext } from "../kernel/types.ts";
import { PiMcpError } from "../kernel/errors.ts";
import { safeText } from "../safety/text.ts";
import type { ServerCatalog } from "./catalog.ts";
import { exposureOf } from "./exposure.ts";
import { lastRetryFailure, type Reconnection } from "./errors.ts";
import type { MinuteCounter, RelistPace } from "./relist.ts";

/** What a connection knows that its status shows. */
export interface StatusFacts {
  readonly host: HostContext;
  readonly entry: ServerEntry;
  readonly state: ConnectionState;
  /** Attempts in the current run of retries. */
  readonly attempts: number;
  readonly nextRetryAt: number | undefined;
  readonly cause: string | undefined;
  /** The current client, if there is one. */
  readonly client: Client | undefined;
  readonly catalog: ServerCatalog;
  readonly connectedAt: number | undefined;
  readonly pid: number | undefined;
  readonly reusedAt: number | undefined;
  readonly lifecycle: Lifecycle;
  readonly idleTimeoutMs: number;
  /** The paces of the server's re-lists (tools, resources) and its change notices of the last minute. */
  readonly paces: readonly RelistPace[];
  readonly notices: MinuteCounter;
}

/** A connection's status (`/mcp status`, `test`, the footer), from what it knows now; every text the server chose is made safe. */
export function connectionStatus(facts: StatusFacts): ConnectionStatus {
  const { host, state, client, catalog } = facts;
  const version = client?.getServerVersion();
  return {
    name: facts.entry.name,
    state,
    attempts: facts.attempts,
    ...(facts.nextRetryAt !== undefined && { nextRetryAt: facts.nextRetryAt }),
    ...(facts.cause !== undefined && { cause: facts.cause }),
    ...(state === "connected" && client?.getNegotiatedProtocolVersion() && { protocolVersion: client.getNegotiatedProtocolVersion()! }),
    ...(version && {
      serverInfo: { name: safeText(version.name, host.redact), version: safeText(version.version, host.redact) },
    }),
    tools: catalog.tools.length,
    exposures: exposureCounts(facts),
    ...(facts.connectedAt !== undefined && { connectedAt: facts.connectedAt }),
    ...(facts.pid !== undefined && { pid: facts.pid }),
    ...(facts.reusedAt !== undefined && { reusedAt: facts.reusedAt }),
    ...(facts.lifecycle === "lazy" && { lazy: { idleTimeoutMs: facts.idleTimeoutMs } }),
    ...configuredRoots(facts),
    ...noisiness(facts),
  };
}

/** A server whose re-lists the pace held back within the last minute: how many notices it sent, how often it is re-listed now. */
function noisiness({ paces, notices }: StatusFacts): { noisy?: { notices: number; relistIntervalMs: number } } {
  const held = paces.filter((pace) => pace.noisy);
  if (held.length === 0) return {};
  return { noisy: { notices: notices.count, relistIntervalMs: Math.max(...held.map((pace) => pace.intervalNowMs)) } };
}

function configuredRoots({ host, entry }: StatusFacts): { roots?: false | string[] } {
  const { config, cwd, redact } = host;
  if (!rootsConfigured(config, entry.definition)) return {};
  const roots = effectiveRoots(config, entry.definition, cwd);
  return { roots: roots === false ? false : roots.map((folder) => safeText(shownRootFolder(folder), redact)) };
}

/** How many of the server's tools have each exposure. */
function exposureCounts({ host, entry, catalog }: StatusFacts): Partial<Record<ExposureSetting, number>> {
  const counts: Partial<Record<ExposureSetting, number>> = {};
  for (const { tool } of catalog.tools) {
    const exposure = exposureOf(host.config, entry.definition, tool.name);
    counts[exposure] = (counts[exposure] ?? 0) + 1;
  }
  return counts;
}

/** Why there is no connected client: the server reconnecting (after what close, which retry), or not connected (its state and cause). */
export function notConnected(
  name: string,
  state: ConnectionState,
  cause: string | undefined,
  reconnection: Reconnection | undefined,
): PiMcpError {
  if (reconnection)
    return new PiMcpError(
      "connection_failed",
      `MCP server "${name}" is reconnecting${reconnection.cause ? ` after ${reconnection.cause}` : ""} (${reconnection.retry})${lastRetryFailure(reconnection)}`,
    );
  return new PiMcpError("connection_failed", `MCP server "${name}" is not connected (${state}${cause ? `: ${cause}` : ""})`);
}
