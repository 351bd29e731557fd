// Streamable HTTP never falls back to legacy SSE: an `http` definition (the
// default for a url) pointed at an SSE-only endpoint fails and says why.
import { afterEach, expect, it } from "vitest";
import { startEverything, startHttpFixture, type RunningServer } from "../helpers/servers.ts";
import { startHost, stopAllHosts, textOf } from "../helpers/host.ts";

const servers: RunningServer[] = [];
afterEach(async () => {
  await stopAllHosts();
  await Promise.all(servers.splice(0).map((server) => server.stop()));
});

async function start(server: Promise<RunningServer>): Promise<RunningServer> {
  const running = await server;
  servers.push(running);
  return running;
}

const SAYS_SO =
  /does not accept Streamable HTTP \(HTTP 40[45]\); pi-mcp never falls back to legacy SSE: if this is an SSE server, set "transport": "sse"/;

it("an http definition pointed at an SSE-only endpoint fails, says it does not fall back, and never opens an event stream there", async () => {
  const sse = await start(startHttpFixture("sse-only"));
  const url = `${sse.baseUrl}/sse`;
  const h = await startHost({ remote: { url } }, { retry: { maxRetries: 1, initialDelayMs: 50 } });
  const status = await h.waitForState("remote", "failed");
  expect(status.cause).toMatch(/HTTP 405|Method Not Allowed/);
  expect(status.cause).toMatch(SAYS_SO);
  expect(status.tools).toBe(0);
  // Every attempt spoke Streamable HTTP only: POSTs to the URL, never the SSE handshake (GET, then POSTs to its endpoint).
  const requests = (await (await fetch(`${sse.baseUrl}/requests`)).json()) as string[];
  expect(requests.length).toBeGreaterThanOrEqual(2);
  expect(new Set(requests)).toEqual(new Set(["POST /sse"]));

  // The endpoint is a working SSE server: written as `transport: "sse"`, the same URL connects.
  const legacy = await startHost({ legacy: { url, transport: "sse" } });
  await legacy.waitForState("legacy", "connected");
  expect(textOf(await legacy.call("mcp__legacy__echo", { text: "over sse" }))).toBe("over sse");
});

it("server-everything's SSE endpoint under an http definition fails with the same explanation", async () => {
  const everything = await start(startEverything("sse"));
  const h = await startHost({ everything: { url: everything.url } }, { retry: { maxRetries: 0 } });
  const status = await h.waitForState("everything", "failed", 15_000);
  expect(status.cause).toMatch(SAYS_SO);
  expect(status.protocolVersion).toBeUndefined();
});
