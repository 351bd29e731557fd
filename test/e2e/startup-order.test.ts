// Enabled servers connect in the background after one event-loop turn at
// session start: Pi's session start and its first prompt never wait for a
// server. Measured as an order of events, not as a time.
import { join } from "node:path";
import { expect, it } from "vitest";
import { fixtureEvent, fixtureEvents, fixturePath } from "../helpers/servers.ts";
import { mcpInRpc, NODE, REPO_ROOT, startPiRpc, usePiHome } from "./harness/pi.ts";

const ORDER_PROBE = join(REPO_ROOT, "test/e2e/fixtures/order-probe.ts");
const home = usePiHome();

it("servers start only after Pi finished its session_start handlers, and the first prompt is answered while a server is still connecting", async () => {
  const events = join(home.home, "events.jsonl");
  await home.writeSettings({
    mcp: {
      connectTimeoutMs: 120_000,
      servers: {
        w: { command: NODE, args: [fixturePath("witness")], environment: { FIXTURE_EVENTS: events } },
        // Still starting for the whole test.
        slow: { command: NODE, args: [fixturePath("slow-start")], environment: { FIXTURE_START_DELAY_MS: "90000" } },
      },
    },
  });
  const rpc = await startPiRpc({ home: home.home, cwd: home.cwd, extensions: [REPO_ROOT, ORDER_PROBE], env: { ORDER_EVENTS: events }, script: [{ text: "answered at once" }] });
  try {
    // The first thing typed: answered by the model, with no tool of the server that is still starting.
    const { records } = await rpc.prompt("hello", { timeoutMs: 30_000 });
    expect(records.some((record) => record.type === "message_end" && JSON.stringify(record.message?.content).includes("answered at once"))).toBe(true);
    const [request] = rpc.requests();
    expect(request?.toolNames.some((name) => name.startsWith("mcp__slow__"))).toBe(false);
    expect(await mcpInRpc(rpc, "status")).toMatch(/^slow: connecting/m);

    // Pi's session start (the handlers of pi-mcp, then of the extension after it) came before any server process.
    await fixtureEvent(events, (event) => event.event === "start");
    expect((await fixtureEvents(events)).map((event) => event.event).slice(0, 2)).toEqual(["session_start", "start"]);
  } finally {
    await rpc.close();
  }
}, 60_000);
