// What a plugin told one server stays told when a later session takes the
// connection over: Pi imports pi-mcp's modules afresh on /reload, so state
// kept per MCP client must outlive a module copy.
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { expect, it } from "vitest";
import { fixtureEvent, fixtureEvents, type FixtureEvent } from "../helpers/servers.ts";
import { mcpInRpc, NODE, REPO_ROOT, startPiRpc, usePiHome } from "./harness/pi.ts";

const PROBE = join(REPO_ROOT, "test/e2e/harness/fixtures/probe.ts");
const PROMPT_SERVER_2026 = fileURLToPath(new URL("../features/fixtures/prompt-server-2026.mjs", import.meta.url));
const home = usePiHome();

it("a 2026-07-28 connection taken over after /reload keeps its one prompt-change stream: the next session opens no second one", async () => {
  const events = join(home.home, "requests.jsonl");
  await home.writeSettings({
    mcp: { servers: { modern: { command: NODE, args: [PROMPT_SERVER_2026], environment: { FIXTURE_EVENTS: events } } } },
  });
  const script = [{ toolCall: { name: "mcp__modern__add-prompt", arguments: { name: "retro" } } }, { text: "added" }];
  const rpc = await startPiRpc({ home: home.home, cwd: home.cwd, extensions: [REPO_ROOT, PROBE], script });
  const promptStreams = (list: readonly FixtureEvent[]) =>
    list.filter(
      (event) =>
        event.method === "subscriptions/listen" &&
        (event.params?.notifications as { promptsListChanged?: boolean } | undefined)?.promptsListChanged === true,
    );
  try {
    expect(await mcpInRpc(rpc, "wait")).toMatch(/^modern: connected/m);
    await fixtureEvent(events, (event) => promptStreams([event]).length === 1);

    await rpc.prompt("/probe_reload");
    const afterReload = await mcpInRpc(rpc, "wait");
    expect(afterReload, afterReload).toMatch(/^modern: connected, [^\n]*reused from an earlier\s+session/m);
    // A call of the new session: the server reads it after anything the session sent when it took the connection over.
    await rpc.prompt("add a prompt");
    const seen = await fixtureEvents(events);
    const call = seen.findIndex((event) => event.method === "tools/call");
    expect(call).toBeGreaterThan(0);
    expect(seen.filter((event) => event.method === "server/discover")).toHaveLength(1); // one connection throughout
    expect(promptStreams(seen.slice(0, call))).toHaveLength(1);
  } finally {
    await rpc.close();
  }
}, 60_000);
