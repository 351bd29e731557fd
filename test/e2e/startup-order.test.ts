// Enabled servers connect in the background after one event-loop turn at
// session start: Pi's session start and its first prompt never wait for a
// server. Measured as an order of events, not as a time: an extension loaded
// before pi-mcp watches the session context every session_start handler gets
// (pi-mcp's first use of it is the start of its work), one loaded after
// pi-mcp marks the end of the handlers, a fixture server logs its start.
import { join } from "node:path";
import { expect, it } from "vitest";
import { fixtureEvent, fixtureEvents, fixturePath } from "../helpers/servers.ts";
import { mcpInRpc, NODE, REPO_ROOT, startPiRpc, usePiHome } from "./harness/pi.ts";

const ORDER_PROBE = join(REPO_ROOT, "test/e2e/fixtures/order-probe.ts");
const CONTEXT_PROBE = join(REPO_ROOT, "test/e2e/fixtures/context-probe.ts");
/**
 * pi-mcp as users load it (the package entry, which imports the core only after the session
 * started), and its core loaded directly: there the core's own deferral is the only one.
 */
const LOADED_AS = { "the package entry": REPO_ROOT, "the core loaded directly": join(REPO_ROOT, "test/e2e/fixtures/core-direct.ts") };
const home = usePiHome();

it.each(Object.entries(LOADED_AS))(
  "pi-mcp begins its work only after Pi ran every session_start handler (one event-loop turn later), servers start after that, and the first prompt is answered while a server is still connecting (%s)",
  async (_loadedAs, extension) => {
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
    const rpc = await startPiRpc({
      home: home.home,
      cwd: home.cwd,
      extensions: [CONTEXT_PROBE, extension, ORDER_PROBE],
      env: { ORDER_EVENTS: events },
      script: [{ text: "answered at once" }],
    });
    try {
      // The first thing typed: answered by the model, with no tool of the server that is still starting.
      const { records } = await rpc.prompt("hello", { timeoutMs: 30_000 });
      expect(
        records.some((record) => record.type === "message_end" && JSON.stringify(record.message?.content).includes("answered at once")),
      ).toBe(true);
      const [request] = rpc.requests();
      expect(request?.toolNames.some((name) => name.startsWith("mcp__slow__"))).toBe(false);
      expect(await mcpInRpc(rpc, "status")).toMatch(/^slow: connecting/m);

      // Pi's session start (the handlers of pi-mcp, then of the extension after it) ended before pi-mcp used the
      // session at all (a start begun inside its handler reads the context there), and before any server process.
      await fixtureEvent(events, (event) => event.event === "start");
      expect((await fixtureEvents(events)).map((event) => event.event).slice(0, 3)).toEqual(["session_start", "context_read", "start"]);
    } finally {
      await rpc.close();
    }
  },
  60_000,
);
