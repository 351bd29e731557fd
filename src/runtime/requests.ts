import type { Client } from "@modelcontextprotocol/client";
import { PiMcpError } from "../kernel/errors.ts";
import type { RequestOptions } from "../kernel/host.ts";
import type { CatalogItem, OptionalListMethod } from "../kernel/protocol.ts";
import type { HostContext } from "../kernel/types.ts";
import { listOptional } from "./catalog.ts";
import { authStateOf, classifyFailure, isNamedFailure, type Reconnection, requestFailure } from "./errors.ts";
import type { RetainedLog } from "./retained-log.ts";

/** The side of its connection request wrapping reads (ServerConnection's own members). */
export interface RequestServer {
  readonly name: string;
  readonly host: HostContext;
  readonly requestTimeoutMs: number;
  readonly log: RetainedLog;
  /** Why the transport closed the connection itself, if it did. */
  readonly closeCause: PiMcpError | undefined;
  /** The close and the retry while the server reconnects after an unexpected close. */
  readonly reconnection: Reconnection | undefined;
  connected(signal?: AbortSignal): Promise<Client>;
  requireClient(): Client;
  /** Recovers from an expired HTTP session (or ends one whose authorization was lost); says whether the request may be sent again. */
  recoverSession(error: unknown): Promise<boolean>;
}

/** What only the connection knows of its requests. */
export interface RequestHooks {
  /** Whether a request waits for the connection first: a lazy server that is idle, or one reconnecting. */
  mustWait(): boolean;
  /** Marks a request in flight (a lazy server is not idle meanwhile); returns the function that ends it. */
  inUse(): () => void;
}

/**
 * How a connection's requests are sent: one request waits for the
 * connection when it must, is sent once more after an expired HTTP session
 * was renewed, and fails naming the server and method; optional lists are
 * read page by page, a method the server does not implement counting as
 * none (logged once per client).
 */
export class ServerRequests {
  /** Optional lists the current client's server answered with -32601 (logged once each). */
  private notImplemented = new Set<string>();

  constructor(
    private readonly target: RequestServer,
    private readonly hooks: RequestHooks,
  ) {}

  /** A new client: what its server implements is learnt anew. */
  newClient(): void {
    this.notImplemented = new Set();
  }

  /** One request, sent once more after an expired HTTP session was renewed; a failure names the server and method. */
  async request<T>(method: string, work: (client: Client) => Promise<T>, options: RequestOptions = {}): Promise<T> {
    const target = this.target;
    const done = this.hooks.inUse();
    try {
      if (this.hooks.mustWait()) await target.connected(options.signal);
      return await this.withSessionRecovery(() => work(target.requireClient()));
    } catch (error) {
      // Already named (not connected, a paging problem), unless it ended because the caller gave up.
      if (isNamedFailure(error) && !options.signal?.aborted) throw error;
      throw requestFailure(`${target.name} ${method}`, error, {
        timeoutMs: target.requestTimeoutMs,
        redact: target.host.redact,
        closeCause: target.closeCause,
        reconnecting: target.reconnection,
        ...(options.signal && { signal: options.signal }),
      });
    } finally {
      done();
    }
  }

  /** `send`, and once more after an expired HTTP session was renewed (an expired session never ran the request). */
  async withSessionRecovery<T>(send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (error) {
      if (!isNamedFailure(error) && (await this.target.recoverSession(error))) return await send();
      throw error;
    }
  }

  /**
   * Every page of an optional list (resources, templates, prompts). A server
   * that does not implement it (-32601) has none: logged once per connection.
   */
  listOptional(client: Client, method: OptionalListMethod, signal?: AbortSignal): Promise<CatalogItem[]> {
    const target = this.target;
    return listOptional(client, method, {
      server: target.name,
      timeoutMs: target.requestTimeoutMs,
      redact: target.host.redact,
      ...(signal && { signal }),
      notImplemented: (missing) => {
        if (this.notImplemented.has(missing)) return;
        this.notImplemented.add(missing);
        target.log.append(`[pi-mcp] the server does not implement ${missing} (-32601 Method not found): it has none\n`);
      },
    });
  }

  /** A failed tools/list names its method (an authorization failure stays as it is: it is classified by its type). */
  namedListFailure(error: unknown): unknown {
    if (error instanceof PiMcpError || authStateOf(error) !== undefined || classifyFailure(error) !== "retryable") return error;
    const target = this.target;
    return requestFailure(`${target.name} tools/list`, error, {
      timeoutMs: target.requestTimeoutMs,
      redact: target.host.redact,
      closeCause: target.closeCause,
    });
  }
}
