import { SSEClientTransport, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import type { Kernel, KernelPlugin } from "../../src/kernel/kernel.ts";
import type { TransportContext } from "../../src/kernel/types.ts";

function requestInit(context: TransportContext): RequestInit {
  const definition = context.server.definition;
  const headers = { ...(definition?.transport === "stdio" ? {} : definition?.headers), ...context.auth?.headers };
  return { headers };
}

/** Remote servers over Streamable HTTP, the default for a url. Never falls back to SSE. */
export class StreamableHttpTransportPlugin implements KernelPlugin {
  readonly name = "transport-http";
  apply(kernel: Kernel): void {
    kernel.hooks.createTransport.tapPromise(this.name, async (context) => {
      const definition = context.server.definition;
      if (definition?.transport !== "http") return undefined;
      const transport = new StreamableHTTPClientTransport(new URL(definition.url), {
        requestInit: requestInit(context),
        ...(context.auth?.authProvider && { authProvider: context.auth.authProvider }),
      });
      return { transport };
    });
  }
}

/** Remote servers over legacy SSE (the SDK's transport, `eventsource` underneath), only when written. */
export class SseTransportPlugin implements KernelPlugin {
  readonly name = "transport-sse";
  apply(kernel: Kernel): void {
    kernel.hooks.createTransport.tapPromise(this.name, async (context) => {
      const definition = context.server.definition;
      if (definition?.transport !== "sse") return undefined;
      const init = requestInit(context);
      const transport = new SSEClientTransport(new URL(definition.url), {
        requestInit: init,
        // The event stream (GET) needs the same headers as the POSTs.
        eventSourceInit: { fetch: (url, options) => fetch(url, { ...options, headers: { ...(options?.headers as Record<string, string>), ...(init.headers as Record<string, string>) } }) },
        ...(context.auth?.authProvider && { authProvider: context.auth.authProvider }),
      });
      return { transport };
    });
  }
}
