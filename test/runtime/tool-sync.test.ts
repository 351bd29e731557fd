// The host's tool sync of a big catalog runs in turns (src/runtime/tool-bridge.ts), so a model switch or a
// run's end can start a sync while another is under way: McpHost.toolsSynced() resolves only once every
// sync started so far has run, which is what Pi's entry waits for before it asks whether the context
// budget decided anew (the line it then says, and the registrations it waits for, depend on it).
// How long Pi's event loop is blocked meanwhile is measured inside a real Pi: test/e2e/registration-stall.test.ts.
import { afterEach, expect, it } from "vitest";
import { fixtureServer, startHost, stopAllHosts } from "../helpers/host.ts";

afterEach(stopAllHosts);

const TOOLS = 10_000;

it("toolsSynced waits for a sync queued behind one under way: the model switch's decision is known then", async () => {
  const h = await startHost({ many: fixtureServer("many-tools", { FIXTURE_TOOLS: String(TOOLS) }) });
  await h.waitForTools(TOOLS, { timeoutMs: 120_000 });
  const decision = () => h.host.budget.current?.servers.get("many")?.auto;
  // A window so large that 10,000 small tools fit its 10%: the server is direct.
  h.host.modelChanged(100_000_000);
  await h.host.toolsSynced();
  expect(decision()).toBe("direct");

  h.host.budget.hold(); // a run's requests went out with the server direct
  h.host.runEnded(); // the run ended: a sync of every tool starts
  h.host.modelChanged(20_000); // a model with a small window, chosen meanwhile: its sync comes after that one
  await h.host.toolsSynced();
  expect(decision()).toBe("deferred");
  expect(h.host.budget.redecided).toBe(true);
}, 180_000);
