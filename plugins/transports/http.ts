import { SSEClientTransport, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import type { RemoteDefinition } from "../../src/config/types.ts";
import type { TransportContext } from "../../src/kernel/types.ts";
import { transportPlugin } from "./plugin.ts";

/** Configured headers plus what the auth plugin supplies, and its SDK auth provider. */
function remoteOptions(definition: RemoteDefinition, context: TransportContext) {
  const headers: Record<string, string> = { ...definition.headers, ...context.auth?.headers };
  return { headers, ...(context.auth?.authProvider && { authProvider: context.auth.authProvider }) };
}

/** Remote servers over Streamable HTTP, the default for a url. Never falls back to SSE. */
export const streamableHttpTransportPlugin = () =>
  transportPlugin("transport-http", "http", (definition, context) => {
    const { headers, ...auth } = remoteOptions(definition, context);
    return new StreamableHTTPClientTransport(new URL(definition.url), { requestInit: { headers }, ...auth });
  });

/** Remote servers over legacy SSE (the SDK's transport, `eventsource` underneath), only when written. */
export const sseTransportPlugin = () =>
  transportPlugin("transport-sse", "sse", (definition, context) => {
    const { headers, ...auth } = remoteOptions(definition, context);
    return new SSEClientTransport(new URL(definition.url), {
      requestInit: { headers },
      // The event stream (GET) needs the same headers as the POSTs.
      eventSourceInit: { fetch: (url, init) => fetch(url, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } }) },
      ...auth,
    });
  });
