import {
  INTERNAL_ERROR,
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  SSEClientTransport,
  StreamableHTTPClientTransport,
  type FetchLike,
  type JSONRPCMessage,
  type MessageExtraInfo,
  type RequestId,
  type SSEClientTransportOptions,
  type StreamableHTTPClientTransportOptions,
  type TransportSendOptions,
} from "@modelcontextprotocol/client";
import type { RemoteDefinition } from "../../src/kernel/settings.ts";
import { MessageTooLargeError } from "../../src/kernel/errors.ts";
import { MAX_MESSAGE_BYTES } from "../../src/kernel/limits.ts";
import type { TransportContext } from "../../src/kernel/types.ts";
import { boundedFetch, fetchUntil, type Exchange } from "../../src/safety/bounded-fetch.ts";
import { transportPlugin } from "./plugin.ts";

/**
 * How a cut response stream is resumed (`Last-Event-ID`, when the server
 * numbered its events): twice, 250 ms and 500 ms after the cut, so a request
 * whose stream cannot be resumed fails about a second after the cut.
 */
const RESUMPTION = { initialReconnectionDelay: 250, reconnectionDelayGrowFactor: 2, maxReconnectionDelay: 1_000, maxRetries: 2 };

/** A server's `retry:` hint is followed up to this long, so it cannot hold a cut request open. */
const MAX_RESUME_DELAY_MS = 1_000;

/** Long-lived streams that answer nothing: their end is not a request left unanswered. */
const STREAM_METHODS = new Set(["subscriptions/listen"]);

type MessageHandler = (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;

/** One request in flight over its own POST (and, maybe, the event stream that answers it). */
interface InFlight {
  readonly id: RequestId;
  answered: boolean;
  /** The id of the last event of its stream (what a resumption sends as Last-Event-ID). */
  lastEventId?: string;
  /** Why its stream failed, when that was the size cap. */
  tooLarge?: MessageTooLargeError;
}

/**
 * The SDK's Streamable HTTP transport, held to pi-mcp's limits through its
 * seams (its `fetch` option, its send options, its message callback):
 *
 * - every response body and every event of a stream is capped at the one
 *   message-size limit; a response over it fails its own request with an
 *   error naming the limit, an event over it on the notification stream
 *   closes the connection (which reconnects by the retry policy);
 * - a request whose response stream ends before the answer (cut, or garbage
 *   instead of the answer) fails at once. The SDK resumes a stream whose
 *   events carry ids (`Last-Event-ID`); only when that is impossible or fails
 *   does the request fail, about a second after the cut. The SDK alone would
 *   leave it waiting for the request timeout.
 */
export class BoundedStreamableHttpTransport extends StreamableHTTPClientTransport {
  private readonly inFlight: Map<RequestId, InFlight>;
  private readonly lifetime: AbortController;
  private readonly endpoint: string;
  private protocolHandler: MessageHandler | undefined;

  constructor(url: URL, options: StreamableHTTPClientTransportOptions, maxMessageBytes = MAX_MESSAGE_BYTES) {
    const self: { transport?: BoundedStreamableHttpTransport } = {};
    // Every exchange ends with the transport, also the OAuth discovery the SDK runs through this fetch after a 401.
    const lifetime = new AbortController();
    super(url, {
      ...options,
      fetch: boundedFetch(fetchUntil(options.fetch ?? fetch, lifetime.signal), maxMessageBytes, (error, eventStream, exchange) =>
        self.transport?.tooLarge(error, eventStream, exchange),
      ),
      reconnectionOptions: RESUMPTION,
      reconnectionScheduler: (reconnect, delay) => {
        const timer = setTimeout(reconnect, Math.min(delay, MAX_RESUME_DELAY_MS));
        return () => clearTimeout(timer);
      },
    });
    self.transport = this;
    this.lifetime = lifetime;
    this.endpoint = url.href;
    this.inFlight = new Map();
    // The protocol sets `onmessage` once it connects; answers pass through here first, to mark their request answered.
    const deliver: MessageHandler = (message, extra) => this.deliver(message, extra);
    Object.defineProperty(this, "onmessage", {
      configurable: true,
      enumerable: true,
      get: () => this.protocolHandler && deliver,
      set: (handler: MessageHandler | undefined) => (this.protocolHandler = handler),
    });
  }

  private deliver(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    if ((isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) && message.id !== undefined) {
      const request = this.inFlight.get(message.id);
      if (request) request.answered = true;
      this.inFlight.delete(message.id);
    }
    this.protocolHandler?.(message, extra);
  }

  override async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (!isJSONRPCRequest(message) || STREAM_METHODS.has(message.method)) return super.send(message, options);
    const request: InFlight = { id: message.id, answered: false };
    this.inFlight.set(message.id, request);
    const onRequestStreamEnd = () => {
      options?.onRequestStreamEnd?.();
      this.streamEnded(request);
    };
    const onresumptiontoken = (token: string) => {
      request.lastEventId = token;
      options?.onresumptiontoken?.(token);
    };
    try {
      await super.send(message, { ...options, onRequestStreamEnd, onresumptiontoken });
    } catch (error) {
      this.inFlight.delete(message.id); // the send itself failed: the protocol rejects the request with this error
      throw error;
    }
  }

  override async close(): Promise<void> {
    this.inFlight.clear();
    try {
      await super.close();
    } finally {
      this.lifetime.abort();
    }
  }

  /** The response stream of `request` ended (also after failed resumption): unanswered, it fails now. */
  private streamEnded(request: InFlight): void {
    if (request.answered || this.inFlight.get(request.id) !== request) return;
    this.inFlight.delete(request.id);
    const reason = request.tooLarge?.message ?? "the server's response stream ended before the answer arrived, and it could not be resumed";
    this.protocolHandler?.({
      jsonrpc: "2.0",
      id: request.id,
      error: { code: INTERNAL_ERROR, message: reason, data: { piMcp: "response-stream-ended" } },
    });
  }

  /**
   * A body over the cap. A request's response (its POST's answer, or the
   * resumption of its stream) fails that request; the notification stream
   * closes the connection. Any other exchange (the OAuth discovery the SDK
   * runs after a 401) fails where it is read, with this error.
   */
  private tooLarge(error: MessageTooLargeError, eventStream: boolean, { url, init }: Exchange): void {
    const resumes = new Headers(init?.headers).get("last-event-id");
    const posted = typeof init?.body === "string" ? requestIdIn(init.body) : undefined;
    const request = posted === undefined ? this.resumedBy(resumes) : this.inFlight.get(posted);
    if (request) request.tooLarge = error;
    else if (eventStream && resumes === null && this.isEndpointGet(url, init)) {
      this.onerror?.(new MessageTooLargeError(error.limitBytes, "HTTP event stream", true));
      this.close().catch(() => undefined);
    }
  }

  /** The request in flight whose stream a GET with this Last-Event-ID resumes. */
  private resumedBy(lastEventId: string | null): InFlight | undefined {
    if (lastEventId === null) return undefined;
    for (const request of this.inFlight.values()) if (request.lastEventId === lastEventId) return request;
    return undefined;
  }

  /** A GET of the endpoint: without Last-Event-ID, the server's own event stream. */
  private isEndpointGet(url: string | URL, init: RequestInit | undefined): boolean {
    return (init?.method ?? "GET").toUpperCase() === "GET" && String(url) === this.endpoint;
  }
}

/** The id of the JSON-RPC request a POST body holds, if it holds one. */
function requestIdIn(body: string): RequestId | undefined {
  try {
    const message: unknown = JSON.parse(body);
    return isJSONRPCRequest(message) ? message.id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The SDK's legacy SSE transport (`eventsource` underneath), with every
 * event and body capped at the message-size limit. All answers share the one
 * event stream, so an event over the cap closes the connection (it
 * reconnects by the retry policy) with an error naming the limit.
 */
export class BoundedSseTransport extends SSEClientTransport {
  private readonly lifetime: AbortController;

  constructor(url: URL, options: SSEClientTransportOptions, maxMessageBytes = MAX_MESSAGE_BYTES) {
    const self: { transport?: BoundedSseTransport } = {};
    // Every exchange ends with the transport, also the OAuth discovery the SDK runs through this fetch after a 401.
    const lifetime = new AbortController();
    const bounded = (base: FetchLike) =>
      boundedFetch(fetchUntil(base, lifetime.signal), maxMessageBytes, (error, eventStream) => {
        if (!eventStream) return; // a POST's own body: its send fails with the error
        self.transport?.onerror?.(new MessageTooLargeError(error.limitBytes, "SSE event stream", true));
        self.transport?.close().catch(() => undefined);
      });
    const eventSourceFetch = options.eventSourceInit?.fetch;
    super(url, {
      ...options,
      fetch: bounded(options.fetch ?? fetch),
      eventSourceInit: { ...options.eventSourceInit, fetch: bounded((eventSourceFetch ?? fetch) as FetchLike) as typeof fetch },
    });
    self.transport = this;
    this.lifetime = lifetime;
  }

  override async close(): Promise<void> {
    try {
      await super.close();
    } finally {
      this.lifetime.abort();
    }
  }
}

/** Configured headers plus what the auth plugin supplies, and its SDK auth provider. */
function remoteOptions(definition: RemoteDefinition, context: TransportContext) {
  const headers: Record<string, string> = { ...definition.headers, ...context.auth?.headers };
  return { headers, ...(context.auth?.authProvider && { authProvider: context.auth.authProvider }) };
}

/** Remote servers over Streamable HTTP, the default for a url. Never falls back to SSE. */
export const streamableHttpTransportPlugin = () =>
  transportPlugin("transport-http", "http", (definition, context) => {
    const { headers, ...auth } = remoteOptions(definition, context);
    return new BoundedStreamableHttpTransport(new URL(definition.url), { requestInit: { headers }, ...auth });
  });

/** Remote servers over legacy SSE, only when written. */
export const sseTransportPlugin = () =>
  transportPlugin("transport-sse", "sse", (definition, context) => {
    const { headers, ...auth } = remoteOptions(definition, context);
    return new BoundedSseTransport(new URL(definition.url), {
      requestInit: { headers },
      // The event stream (GET) needs the same headers as the POSTs.
      eventSourceInit: {
        fetch: (url, init) => fetch(url, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } }),
      },
      ...auth,
    });
  });
