/**
 * Which exchange an oversized HTTP body ended, told from the exchange itself:
 * the Streamable HTTP transport (with a 4 KiB cap here) against a loopback
 * server written for it. An answer over the cap fails its own request, also
 * when it arrives on the resumption of a cut stream (a GET with the request's
 * last event id); an event over the cap on the server's own event stream
 * closes the connection; the connection otherwise stays open.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import { afterEach, expect, it } from "vitest";
import { BoundedStreamableHttpTransport } from "../../plugins/transports/http.ts";

const CAP = 4096;
const OVERSIZED = JSON.stringify({ jsonrpc: "2.0", method: "notifications/message", params: { data: "x".repeat(CAP * 2) } });
const NAMES_THE_LIMIT = /larger than the .*message-size limit/;

let server: Server | undefined;
let transport: BoundedStreamableHttpTransport | undefined;
afterEach(async () => {
  await transport?.close().catch(() => undefined);
  await new Promise((resolve) => server?.close(resolve));
  server?.closeAllConnections();
  server = transport = undefined;
});

async function body(request: IncomingMessage): Promise<string> {
  let text = "";
  for await (const chunk of request) text += chunk;
  return text;
}

/**
 * A server whose `cut` request's stream gives one numbered event and ends
 * (the transport resumes it), whose `echo` answers with JSON, and whose GET
 * streams (a resumption, or its own event stream when `noisy`) send one
 * event over the cap.
 */
async function start({ noisy }: { noisy: boolean }): Promise<{ url: URL; gets: string[] }> {
  const gets: string[] = [];
  server = createServer(async (request, response) => {
    if (request.method === "GET") {
      const resumes = request.headers["last-event-id"];
      gets.push(typeof resumes === "string" ? `resume ${resumes}` : "event stream");
      if (!resumes && !noisy) return void response.writeHead(405).end();
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write(`data: ${OVERSIZED}\n\n`);
      return;
    }
    const message = JSON.parse(await body(request)) as { id?: number; method: string; params?: { text?: string } };
    if (message.id === undefined) return void response.writeHead(202).end();
    if (message.method === "cut") {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.end("id: e1\ndata: \n\n");
      return;
    }
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result: { text: message.params?.text } }));
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return { url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`), gets };
}

/** The transport, started, with every message it delivers and whether it closed. */
async function open(url: URL): Promise<{ answers: Map<number, JSONRPCMessage>; closed: Promise<Error | undefined> }> {
  transport = new BoundedStreamableHttpTransport(url, {}, CAP);
  const answers = new Map<number, JSONRPCMessage>();
  let firstError: Error | undefined;
  const closed = new Promise<Error | undefined>((resolve) => {
    transport!.onclose = () => resolve(firstError);
  });
  transport.onerror = (error) => {
    firstError ??= error;
  };
  transport.onmessage = (message) => {
    if ("id" in message && typeof message.id === "number") answers.set(message.id, message);
  };
  await transport.start();
  return { answers, closed };
}

async function answerTo(answers: Map<number, JSONRPCMessage>, id: number): Promise<JSONRPCMessage> {
  await expect.poll(() => answers.has(id), { timeout: 10_000 }).toBe(true);
  return answers.get(id)!;
}

it("an answer over the cap on the resumption of a cut stream fails its own request, and the connection stays open", async () => {
  const { url, gets } = await start({ noisy: false });
  const { answers, closed } = await open(url);
  let isClosed = false;
  void closed.then(() => (isClosed = true));
  await transport!.send({ jsonrpc: "2.0", id: 1, method: "cut" });
  const failed = (await answerTo(answers, 1)) as { error?: { message: string } };
  expect(failed.error?.message).toMatch(NAMES_THE_LIMIT);
  expect(gets).toContain("resume e1");
  await transport!.send({ jsonrpc: "2.0", id: 2, method: "echo", params: { text: "still open" } });
  expect(await answerTo(answers, 2)).toMatchObject({ result: { text: "still open" } });
  expect(isClosed).toBe(false);
});

it("an event over the cap on the server's own event stream closes the connection, naming the limit", async () => {
  const { url, gets } = await start({ noisy: true });
  const { closed } = await open(url);
  // The transport opens the server's event stream once the session is initialized.
  await transport!.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  expect((await closed)?.message).toMatch(NAMES_THE_LIMIT);
  expect(gets).toEqual(["event stream"]);
});
