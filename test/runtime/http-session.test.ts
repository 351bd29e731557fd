// Streamable HTTP sessions through OUR host: a session the server forgot is
// replaced by a new one without the model seeing an error.
import { afterEach, expect, it } from "vitest";
import { childServers, eventually, startHost, stopAllHosts, textOf, type TestHost } from "../helpers/host.ts";
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

/**
 * Exactly one replacement session, and nothing left that would start another:
 * the host went through one reconnect (no retry, no second attempt), no retry is
 * pending, and the server holds only the new session.
 */
async function expectOneReplacement(h: TestHost, initializedBefore: number): Promise<void> {
  expect(h.states("remote")).toEqual(["connecting", "connected", "connecting", "connected"]);
  expect(h.status("remote")).toMatchObject({ state: "connected" });
  expect(h.status("remote").nextRetryAt).toBeUndefined();
  expect(await stats()).toEqual({ sessions: 1, initialized: initializedBefore + 1 });
}

it("recovers an expired HTTP session transparently: the next call succeeds over a new session", async () => {
  server = await startHttpFixture("http-basic");
  const h = await startHost({ remote: { url: server.url } });
  await h.waitForTools(2, { server: "remote" });
  expect(textOf(await h.call("mcp__remote__echo", { text: "before" }))).toBe("before");
  const before = await stats();
  expect(before.sessions).toBe(1);

  expect(textOf(await h.call("mcp__remote__forget"))).toBe("forgetting");
  // The fixture drops its sessions once its answer is written.
  await eventually(
    async () => ((await stats()).sessions === 0 ? true : undefined),
    30_000,
    () => "the fixture still holds its session",
  );

  expect(textOf(await h.call("mcp__remote__echo", { text: "after" }))).toBe("after");
  const after = await stats();
  expect(after.initialized).toBe(before.initialized + 1);
  expect(h.status("remote").state).toBe("connected");

  // Exactly one replacement session: no second, stray reconnect follows.
  await expectOneReplacement(h, before.initialized);
  expect(textOf(await h.call("mcp__remote__echo", { text: "later" }))).toBe("later");
  expect(await stats()).toEqual({ sessions: 1, initialized: before.initialized + 1 });
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
  await expectOneReplacement(h, before.initialized);
  await h.stop();
  await server.stop();
  server = undefined;
  expect(childServers()).toEqual([]);
});

it("sends configured headers and the bearer token, expanded from the environment, on every request", async () => {
  server = await startHttpFixture("http-basic");
  const env = { ...process.env, WORKSPACE_ID: "ws-4242", MCP_TOKEN: "token-e2e-9d8c7b" };
  const h = await startHost(
    { remote: { url: server.url, headers: { "X-Workspace": "${WORKSPACE_ID}" }, auth: { type: "bearer", token: "${MCP_TOKEN}" } } },
    { env },
  );
  await h.waitForTools(2, { server: "remote" });
  expect(textOf(await h.call("mcp__remote__echo", { text: "with headers" }))).toBe("with headers");
  const headers = (await (await fetch(`${server.baseUrl}/last-headers`)).json()) as Record<string, string>;
  expect(headers["x-workspace"]).toBe("ws-4242");
  expect(headers.authorization).toBe("Bearer token-e2e-9d8c7b");
  expect(JSON.stringify(h.status("remote"))).not.toContain("token-e2e-9d8c7b");
});
