// Within one Pi process, live connections are handed to the next session over
// Streamable HTTP and legacy SSE too, across /reload, /new, /resume and /fork:
// the server sees one session (one initialize, one event stream) throughout.
// (stdio: sessions.test.ts.)
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { startHttpFixture, type RunningServer } from "../helpers/servers.ts";
import { mcpInRpc, REPO_ROOT, startPiRpc, usePiHome } from "./harness/pi.ts";

const PROBE = join(REPO_ROOT, "test/e2e/harness/fixtures/probe.ts");
const home = usePiHome();

const servers: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.stop()));
});

async function stats(server: RunningServer): Promise<Record<string, number>> {
  return (await (await fetch(`${server.baseUrl}/stats`)).json()) as Record<string, number>;
}

it("keeps one Streamable HTTP session and one SSE stream across /reload, new_session, switch_session (/resume) and fork", async () => {
  const http = await startHttpFixture("http-basic");
  const sse = await startHttpFixture("sse-only");
  servers.push(http, sse);
  await home.writeSettings({ mcp: { servers: { http: { url: http.url }, sse: { url: `${sse.baseUrl}/sse`, transport: "sse" } } } });
  const script = [
    { text: "noted" },
    { toolCall: { name: "mcp__http__echo", arguments: { text: "still http" } } },
    { textFromLastToolResult: true as const },
    { toolCall: { name: "mcp__sse__echo", arguments: { text: "still sse" } } },
    { textFromLastToolResult: true as const },
  ];
  const rpc = await startPiRpc({ home: home.home, cwd: home.cwd, extensions: [REPO_ROOT, PROBE], noSession: false, script });
  const reusedBoth = async (step: string) => {
    const status = await mcpInRpc(rpc, "wait");
    expect(status, step).toMatch(/^http: connected, 2 tools, protocol [^,]+, reused from an earlier session/m);
    expect(status, step).toMatch(/^sse: connected, \d+ tools, protocol [^,]+, reused from an earlier session/m);
    expect(await stats(http), step).toEqual({ sessions: 1, initialized: 1 });
    expect(await stats(sse), step).toEqual({ streams: 1, initialized: 1 });
  };
  try {
    const first = await mcpInRpc(rpc, "wait");
    expect(first).toMatch(/^http: connected/m);
    expect(first).toMatch(/^sse: connected/m);
    expect(first).not.toContain("reused");
    expect(await stats(http)).toEqual({ sessions: 1, initialized: 1 });
    expect(await stats(sse)).toEqual({ streams: 1, initialized: 1 });
    await rpc.prompt("a first message");
    const { sessionFile } = (await rpc.send({ type: "get_state" })).data;
    expect(sessionFile).toBeTruthy();

    await rpc.prompt("/probe_reload");
    await reusedBoth("after /reload");

    expect((await rpc.send({ type: "new_session" })).data).toEqual({ cancelled: false });
    await reusedBoth("after new_session");

    expect((await rpc.send({ type: "switch_session", sessionPath: sessionFile })).data).toMatchObject({ cancelled: false });
    expect((await rpc.send({ type: "get_state" })).data.sessionFile).toBe(sessionFile);
    await reusedBoth("after switch_session (resume)");

    const [message] = (await rpc.send({ type: "get_fork_messages" })).data.messages;
    expect((await rpc.send({ type: "fork", entryId: message.entryId })).data).toMatchObject({ cancelled: false });
    await reusedBoth("after fork");

    // The adopted connections serve the new session's calls.
    expect(
      (await rpc.prompt("echo over http")).records.some(
        (record) => record.type === "message_end" && JSON.stringify(record.message?.content).includes("still http"),
      ),
    ).toBe(true);
    expect(
      (await rpc.prompt("echo over sse")).records.some(
        (record) => record.type === "message_end" && JSON.stringify(record.message?.content).includes("still sse"),
      ),
    ).toBe(true);
    expect(await stats(http)).toEqual({ sessions: 1, initialized: 1 });
    expect(await stats(sse)).toEqual({ streams: 1, initialized: 1 });
  } finally {
    await rpc.close();
  }
}, 120_000);
