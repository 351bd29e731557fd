/**
 * The transport plugins in-process: a kernel holding only them answers
 * `createTransport` with the SDK's transport for each kind of definition
 * (stdio, Streamable HTTP, legacy SSE), one plugin per kind, and the SDK's
 * client runs over what they return. Against real loopback servers (the HTTP
 * fixtures) and a real process (stdio, where the process is the point): the
 * configured headers and what the auth plugins supplied go with every request,
 * the SSE event stream included, and every message is capped at the one
 * 16 MiB limit, an over-long answer failing only its own request over
 * Streamable HTTP and closing the connection over SSE and stdio, the error
 * naming the limit. Through a whole host: test/faults/limits.test.ts.
 */
import { Client, SSEClientTransport, StreamableHTTPClientTransport, type Transport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterEach, describe, expect, it } from "vitest";
import { sseTransportPlugin, streamableHttpTransportPlugin } from "../../plugins/transports/http.ts";
import { stdioTransportPlugin } from "../../plugins/transports/stdio.ts";
import { Kernel, type KernelPlugin } from "../../src/kernel/kernel.ts";
import { MAX_MESSAGE_BYTES } from "../../src/kernel/limits.ts";
import type { AuthHandle, TransportContext } from "../../src/kernel/types.ts";
import { createRedactor } from "../../src/safety/text.ts";
import { buildConfig, type RawDefinition } from "../helpers/host.ts";
import { nodePath, type RunningServer, startHttpFixture } from "../helpers/servers.ts";

const NAMES_THE_LIMIT = /the server sent a message larger than the 16 MiB message-size limit/;
const OVER_THE_CAP = MAX_MESSAGE_BYTES + 1024 * 1024;

const transportPlugins = (): KernelPlugin[] => [stdioTransportPlugin(), streamableHttpTransportPlugin(), sseTransportPlugin()];

/** What a connection of server `name` (settings `definition`) asks the transport plugins for, with `auth` from the auth plugins. */
function connectionOf(definition: RawDefinition, auth?: AuthHandle): TransportContext {
  const config = buildConfig({ server: definition });
  const server = config.servers.find((entry) => entry.name === "server")!;
  const host = { cwd: process.cwd(), redact: createRedactor(config.secrets) };
  return { host, server, log: () => {}, auth } as unknown as TransportContext;
}

const DEFINITIONS: Record<string, RawDefinition> = {
  stdio: { command: nodePath(), args: ["server.js"] },
  http: { url: "http://127.0.0.1:9/mcp" },
  sse: { url: "http://127.0.0.1:9/sse", transport: "sse" },
};

describe("which transport a definition gets", () => {
  it("the SDK's transport of its kind: stdio, Streamable HTTP (never SSE for a url), legacy SSE when written", async () => {
    const kernel = new Kernel(transportPlugins());
    const made = async (kind: string) => (await kernel.hooks.createTransport.promise(connectionOf(DEFINITIONS[kind]!)))?.transport;
    expect(await made("stdio")).toBeInstanceOf(StdioClientTransport);
    expect(await made("http")).toBeInstanceOf(StreamableHTTPClientTransport);
    expect(await made("http")).not.toBeInstanceOf(SSEClientTransport);
    expect(await made("sse")).toBeInstanceOf(SSEClientTransport);
  });

  it("from the one plugin of that kind: each alone answers its own kind and leaves the others to another plugin", async () => {
    const plugins = { stdio: stdioTransportPlugin(), http: streamableHttpTransportPlugin(), sse: sseTransportPlugin() };
    for (const [kind, plugin] of Object.entries(plugins)) {
      const alone = new Kernel([plugin]);
      for (const definition of Object.keys(DEFINITIONS)) {
        const handle = await alone.hooks.createTransport.promise(connectionOf(DEFINITIONS[definition]!));
        expect(handle !== undefined, `${plugin.name} for ${definition}`).toBe(definition === kind);
      }
    }
  });
});

const servers: RunningServer[] = [];
const clients: Client[] = [];
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((client) => client.close()));
  await Promise.allSettled(servers.splice(0).map((server) => server.stop()));
});

async function fixture(name: string): Promise<RunningServer> {
  const server = await startHttpFixture(name);
  servers.push(server);
  return server;
}

/** The SDK's client over the transport the plugins make for `definition`, connected. */
async function connect(definition: RawDefinition, auth?: AuthHandle): Promise<{ client: Client; transport: Transport }> {
  const handle = await new Kernel(transportPlugins()).hooks.createTransport.promise(connectionOf(definition, auth));
  const client = new Client({ name: "transports-test", version: "1.0.0" });
  clients.push(client);
  await client.connect(handle!.transport);
  return { client, transport: handle!.transport };
}

const echo = async (client: Client, text: string) => (await client.callTool({ name: "echo", arguments: { text } })).content;
const BEARER: AuthHandle = { headers: { Authorization: "Bearer from-the-auth-plugin" } };

describe("headers", () => {
  it("Streamable HTTP sends the configured headers and the auth plugin's with every request", async () => {
    const server = await fixture("http-basic");
    const { client } = await connect({ url: server.url, headers: { "X-Workspace": "w1" } }, BEARER);
    expect(await echo(client, "hi")).toEqual([{ type: "text", text: "hi" }]);
    expect(await (await fetch(`${server.baseUrl}/last-headers`)).json()).toMatchObject({
      "x-workspace": "w1",
      authorization: "Bearer from-the-auth-plugin",
    });
  });

  it("legacy SSE sends them with its event stream (GET) as well as with every message it posts", async () => {
    const server = await fixture("sse-only");
    const { client } = await connect({ url: `${server.baseUrl}/sse`, transport: "sse", headers: { "X-Workspace": "w1" } }, BEARER);
    expect(await echo(client, "hi")).toEqual([{ type: "text", text: "hi" }]);
    const seen = (await (await fetch(`${server.baseUrl}/headers`)).json()) as { request: string; headers: Record<string, string> }[];
    expect(seen.map((exchange) => exchange.request)).toEqual(expect.arrayContaining(["GET /sse", "POST /messages"]));
    for (const exchange of seen) {
      expect(exchange.headers, exchange.request).toMatchObject({ "x-workspace": "w1", authorization: "Bearer from-the-auth-plugin" });
    }
  });
});

/** Resolves, once the transport has closed, with the first error it reported (its client, if any, still hears of both). */
function closedWith(transport: Transport): Promise<Error | undefined> {
  const { onerror, onclose } = transport;
  return new Promise((resolve) => {
    let first: Error | undefined;
    transport.onerror = (error) => {
      first ??= error;
      onerror?.(error);
    };
    transport.onclose = () => {
      onclose?.();
      resolve(first);
    };
  });
}

describe("one 16 MiB cap on every message", () => {
  it.each(["json", "sse"])(
    "Streamable HTTP (%s answer): an answer over the cap fails its own request, naming the limit; the next request is answered",
    async (mode) => {
      const { client } = await connect({ url: (await fixture("http-faults")).url });
      await expect(client.callTool({ name: "big", arguments: { bytes: OVER_THE_CAP, mode } })).rejects.toThrow(NAMES_THE_LIMIT);
      expect(await echo(client, "still here")).toEqual([{ type: "text", text: "still here" }]);
    },
  );

  it("legacy SSE: an event over the cap closes the connection, naming the limit", async () => {
    const server = await fixture("sse-only");
    const { client, transport } = await connect({ url: `${server.baseUrl}/sse`, transport: "sse" });
    const closed = closedWith(transport);
    await expect(client.callTool({ name: "big", arguments: { bytes: OVER_THE_CAP } })).rejects.toThrow("Connection closed");
    expect((await closed)?.message).toMatch(NAMES_THE_LIMIT);
  });

  it("stdio: a line over the cap closes the connection, naming the limit", async () => {
    const endless = `process.stdout.write("x".repeat(${OVER_THE_CAP}))`;
    const handle = await new Kernel(transportPlugins()).hooks.createTransport.promise(
      connectionOf({ command: nodePath(), args: ["-e", endless] }),
    );
    const transport = handle!.transport;
    const closed = closedWith(transport);
    try {
      await transport.start();
      expect((await closed)?.message).toMatch(NAMES_THE_LIMIT);
    } finally {
      await transport.close();
    }
  });
});
