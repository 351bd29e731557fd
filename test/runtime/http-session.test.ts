// Streamable HTTP sessions through OUR host: a session the server forgot is
// replaced by a new one without the model seeing an error.
import { afterEach, expect, it } from "vitest";
import { childServers, startHost, stopAllHosts, textOf } from "../helpers/host.ts";
import { startHttpFixture, type RunningServer } from "../helpers/servers.ts";

let server: RunningServer | undefined;
afterEach(async () => {
  await stopAllHosts();
  await server?.stop();
  server = undefined;
});

async function stats(): Promise<{ sessions: number; initialized: number }> {
  return (await (await fetch(`${server!.baseUrl}/stats`)).json()) as { sessions: number; initialized: number };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

it("recovers an expired HTTP session transparently: the next call succeeds over a new session", async () => {
  server = await startHttpFixture("http-basic");
  const h = await startHost({ remote: { url: server.url } });
  await h.waitForTools(2, { server: "remote" });
  expect(textOf(await h.call("mcp__remote__echo", { text: "before" }))).toBe("before");
  const before = await stats();
  expect(before.sessions).toBe(1);

  expect(textOf(await h.call("mcp__remote__forget"))).toBe("forgetting");
  await sleep(100); // the fixture drops its sessions 20 ms after answering
  expect((await stats()).sessions).toBe(0);

  expect(textOf(await h.call("mcp__remote__echo", { text: "after" }))).toBe("after");
  const after = await stats();
  expect(after.initialized).toBe(before.initialized + 1);
  expect(h.status("remote").state).toBe("connected");

  // Exactly one replacement session: no second, stray reconnect follows.
  await sleep(500);
  expect(await stats()).toMatchObject({ sessions: 1, initialized: before.initialized + 1 });
  expect(h.status("remote").state).toBe("connected");
  expect(textOf(await h.call("mcp__remote__echo", { text: "later" }))).toBe("later");
});

it("recovers when the server drops every session out of band (POST /drop-sessions)", async () => {
  server = await startHttpFixture("http-basic");
  const h = await startHost({ remote: { url: server.url } });
  await h.waitForTools(2, { server: "remote" });
  const before = await stats();
  const dropped = (await (await fetch(`${server.baseUrl}/drop-sessions`, { method: "POST" })).json()) as { dropped: number };
  expect(dropped.dropped).toBe(1);
  expect(textOf(await h.call("mcp__remote__echo", { text: "again" }))).toBe("again");
  expect((await stats()).initialized).toBeGreaterThan(before.initialized);
  // One replacement session, and no stray reconnect that leaves an unclosed client (and its session) behind.
  await sleep(500);
  expect(await stats()).toMatchObject({ sessions: 1, initialized: before.initialized + 1 });
  expect(h.status("remote").state).toBe("connected");
  await h.stop();
  await server.stop();
  server = undefined;
  expect(childServers()).toEqual([]);
});

it("sends configured headers and the bearer token, expanded from the environment, on every request", async () => {
  server = await startHttpFixture("http-basic");
  const env = { ...process.env, WORKSPACE_ID: "ws-4242", MCP_TOKEN: "token-e2e-9d8c7b" };
  const h = await startHost({ remote: { url: server.url, headers: { "X-Workspace": "${WORKSPACE_ID}" }, auth: { type: "bearer", token: "${MCP_TOKEN}" } } }, { env });
  await h.waitForTools(2, { server: "remote" });
  expect(textOf(await h.call("mcp__remote__echo", { text: "with headers" }))).toBe("with headers");
  const headers = (await (await fetch(`${server.baseUrl}/last-headers`)).json()) as Record<string, string>;
  expect(headers["x-workspace"]).toBe("ws-4242");
  expect(headers.authorization).toBe("Bearer token-e2e-9d8c7b");
  expect(JSON.stringify(h.status("remote"))).not.toContain("token-e2e-9d8c7b");
});
