// Protocol storms and requests from the server, through OUR host with real
// processes: 10,000 list_changed notifications in a burst, and sampling and
// elicitation requests from a server to which those capabilities were not declared.
import { afterEach, describe, expect, it } from "vitest";
import { createKernel } from "../../src/composition.ts";
import { STAGE, type KernelPlugin } from "../../src/kernel/kernel.ts";
import { fixtureServer, startHost, stopAllHosts, textOf } from "../helpers/host.ts";
import { expectBystanderWorks } from "./_shared.ts";

afterEach(stopAllHosts);

const bystander = fixtureServer("basic");

describe("10,000 list_changed notifications in a burst", () => {
  it("are coalesced: the tool sink (Pi) is touched a bounded number of times, the final catalog is right, and other servers keep working", async () => {
    const h = await startHost({ churn: fixtureServer("list-changed"), bystander });
    await h.waitForTools(3, { server: "churn" });
    await h.waitForTools(3, { server: "bystander" });
    const touchesBefore = h.sink.registerCalls.length + h.sink.deactivateCalls.length;
    const started = Date.now();
    // The bystander is called while the storm runs.
    const during = (async () => {
      for (let i = 0; i < 10; i++) await expectBystanderWorks(h, `during ${i}`);
    })();
    expect(textOf(await h.call("mcp__churn__churn", { count: 10_000 }))).toBe("churned 10000");
    const sent = Date.now() - started;
    await during;
    await h.waitUntil(() => h.sink.active.has("mcp__churn__gen_10000"));
    await h.host.flushTools(); // anything still folded in a window lands now
    const touches = h.sink.registerCalls.length + h.sink.deactivateCalls.length - touchesBefore;
    // The storm never stalls the host (a loaded machine takes seconds to send it, a stalled host forever).
    expect(sent).toBeLessThan(20_000);
    // One catalog update per 50 ms window at most (each a register plus a deactivate), whatever the storm.
    expect(touches).toBeLessThanOrEqual(2 * Math.ceil((Date.now() - started) / 50) + 2);
    expect(touches).toBeLessThanOrEqual(40);
    expect([...h.sink.active].filter((name) => name.startsWith("mcp__churn__gen_"))).toEqual(["mcp__churn__gen_10000"]);
    expect(textOf(await h.call("mcp__churn__gen_10000"))).toBe("gen_10000");
    expect(h.status("churn").state).toBe("connected");
    await expectBystanderWorks(h);
  }, 30_000);
});

/** Takes sampling and elicitation out of the declared client capabilities, whatever other plugins declare. */
const undeclare: KernelPlugin = {
  name: "test-undeclare-sampling-elicitation",
  apply(kernel) {
    kernel.hooks.clientCapabilities.tap({ name: "test-undeclare-sampling-elicitation", stage: STAGE.FALLBACK + 1 }, (capabilities) => {
      const { sampling: _sampling, elicitation: _elicitation, ...rest } = capabilities;
      return rest;
    });
  },
};

describe("server requests for capabilities that were not declared", () => {
  it("are answered -32601 by the client (during a call and outside one), and the connection and the others keep working", async () => {
    const h = await startHost(
      { asker: fixtureServer("server-requests", { FIXTURE_ASK_AT_START: "1" }), bystander },
      { kernel: createKernel({ plugins: [undeclare] }) },
    );
    await h.waitForTools(3, { server: "asker" });
    await h.waitForTools(3, { server: "bystander" });
    for (const method of ["sampling/createMessage", "elicitation/create"]) {
      const reply = JSON.parse(textOf(await h.call("mcp__asker__ask", { method }))) as { error?: { code: number; message: string } };
      expect(reply.error?.code).toBe(-32601);
    }
    // The requests sent right after initialization, outside any call, got the same answer.
    // (The server answers once both replies have reached it.)
    const startup = JSON.parse(textOf(await h.call("mcp__asker__startup-replies"))) as { method: string; error?: { code: number } }[];
    expect(startup.map((reply) => [reply.method, reply.error?.code]).sort()).toEqual([
      ["elicitation/create", -32601],
      ["sampling/createMessage", -32601],
    ]);
    expect(h.status("asker").state).toBe("connected");
    expect(textOf(await h.call("mcp__asker__echo", { text: "fine" }))).toBe("fine");
    await expectBystanderWorks(h);
  });
});
