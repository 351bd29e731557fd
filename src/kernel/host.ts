/*
 * The host as plugins see it: a narrow view of one session's MCP host (or one
 * CLI run's). Commands reach it through `env.runtime.host()`, hooks through
 * their `host` argument; the runtime behind it (connections, the catalog, the
 * result pipeline) stays out of reach.
 */
import type { Client } from "@modelcontextprotocol/client";
import type { CatalogItem, OptionalListMethod } from "./protocol.ts";
import type { CallScope, ToolOutcome } from "./services.ts";
import type { ConnectionState, ConnectionStatus } from "./status.ts";
import type { CompletionRequest, HostContext, MappedResult, RequestOptions, ServerLog, ServerRequests } from "./types.ts";

export type { RequestOptions, ServerRequests };

/** One configured server of the host, connected or not. */
export interface LiveServer extends ServerRequests {
  readonly name: string;
  readonly state: ConnectionState;
  readonly log: ServerLog;
  /**
   * The connected client once the server is no longer connecting (waited for
   * up to its connect timeout); rejects with the reason when it is not
   * connected.
   */
  connected(): Promise<Client>;
  /** Every page of an optional list; a server that does not implement it (-32601) has none. */
  list(method: OptionalListMethod, options?: RequestOptions): Promise<CatalogItem[]>;
  /** Marks foreground work (a prompt the person runs): server requests that arrive meanwhile are scoped to it. Returns the function that ends it. */
  enterCall(scope: CallScope): () => void;
}

/** Where a result comes from: the server and the MCP operation (a tool, a prompt, a resource URI, a list method). */
export interface ResultOrigin {
  readonly server: string;
  readonly operation: string;
}

/**
 * The result pipeline every MCP answer with content takes (tool results,
 * resource contents, prompt messages, the resource listings): the result
 * mappers, then Pi's limits with a Result Spill for what they cut.
 */
export interface ResultPipeline {
  /** Maps the answer's `content` blocks to Pi content (the `mapResult` hook and the mappers per content type). */
  map(origin: ResultOrigin, raw: Readonly<Record<string, unknown>>, details: Record<string, unknown>): Promise<MappedResult>;
  /** Flattens mapped blocks into Pi content within Pi's limits; the complete text of a cut one goes to a Result Spill. */
  finish(origin: ResultOrigin, mapped: MappedResult): Promise<ToolOutcome>;
}

export interface PluginHost {
  readonly context: HostContext;
  /** Every configured server's status, as `/mcp status` shows it. */
  status(): ConnectionStatus[];
  /** A configured server of this host (a disabled one too, in state `disabled`); undefined for a masked or unknown name. */
  server(name: string): LiveServer | undefined;
  readonly results: ResultPipeline;
  /** Values suggested for a prompt argument (the `complete` hook; none when no plugin answers). */
  complete(request: CompletionRequest): Promise<readonly string[]>;
}
