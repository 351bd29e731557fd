// Faults of the server process and its stdio stream, through OUR host with real
// processes: kill -9 mid-call, malformed JSON-RPC and answers to ids never
// used, broken answers to the call's own id, and a deeply nested schema.
import { afterEach, describe, expect, it } from "vitest";
import { fixtureServer, startHost, stopAllHosts, textOf, until, type TestHost } from "../helpers/host.ts";
import { LazySchemas } from "../../src/runtime/schemas.ts";
import { expectBystanderWorks, rejectsWithin } from "./_shared.ts";

afterEach(stopAllHosts);

const bystander = fixtureServer("basic");

async function ready(h: TestHost, server: string, tools: number): Promise<void> {
  await h.waitForTools(tools, { server, timeoutMs: 15_000 });
  await h.waitForTools(3, { server: "bystander", timeoutMs: 15_000 });
}

describe("kill -9 of a stdio server mid-call", () => {
  it("fails the calls in flight at once with a lost-connection error, restarts the server by the retry policy, and leaves the others alone", async () => {
    const h = await startHost({ victim: fixtureServer("hang"), bystander }, { retry: { maxRetries: 3, initialDelayMs: 100 } });
    await ready(h, "victim", 2);
    const pid = h.status("victim").pid!;
    expect(pid).toBeGreaterThan(0);
    const calls = [h.call("mcp__victim__slow", { ms: 30_000 }), h.call("mcp__victim__slow", { ms: 30_000 }), h.call("mcp__victim__hang")];
    // Killed once the server is working on all three (it says so on stderr, which the host retains).
    const log = h.host.server("victim")!.log;
    await until(
      () =>
        log
          .text()
          .split("\n")
          .filter((line) => line.startsWith("call ")).length === 3,
      15_000,
      () => log.text(),
    );
    process.kill(pid, "SIGKILL");
    for (const call of calls) {
      const error = await rejectsWithin(call, 5_000);
      // It names the crash and the retry in progress (issue 23).
      expect(error.message).toMatch(
        /^victim\/(slow|hang) failed: the server's connection was lost during the call \(the connection closed unexpectedly: the server process was stopped by signal SIGKILL[^)]*\); it is reconnecting \(retry 1 of 3 in \d+ s\)$/,
      );
    }
    await expectBystanderWorks(h);
    await h.waitForState("victim", "connected", 30_000);
    expect(h.status("victim").pid).not.toBe(pid);
    expect(textOf(await h.call("mcp__victim__slow", { ms: 1 }))).toBe("slept 1");
  });
});

describe("malformed JSON-RPC", () => {
  it("ignores truncated JSON, non-JSON-RPC lines, answers to ids never used and unknown notifications: every call still gets its answer", async () => {
    const h = await startHost({ junk: fixtureServer("malformed"), bystander });
    await ready(h, "junk", 1);
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => h.call("mcp__junk__echo", { text: `call ${i}` })));
    expect(answers.map(textOf)).toEqual(Array.from({ length: 20 }, (_, i) => `call ${i}`));
    expect(h.status("junk").state).toBe("connected");
    expect(h.host.server("junk")!.log.text()).toMatch(/unknown message ID/i);
    await expectBystanderWorks(h);
  });

  it("fails a call whose own answer is broken with a clear error no later than the request timeout, and the server stays usable", async () => {
    const h = await startHost({ hostile: fixtureServer("hostile-rpc", {}, { requestTimeoutMs: 1_500 }), bystander });
    await ready(h, "hostile", 8);
    // Answers the SDK cannot accept are dropped (and logged); each call ends at its timeout.
    const broken = ["no-result", "string-result", "bad-error", "wrong-id", "batch"];
    const errors = await Promise.all(broken.map((tool) => rejectsWithin(h.call(`mcp__hostile__${tool}`), 5_000)));
    expect(errors.map((error) => error.message)).toEqual(broken.map((tool) => `hostile/${tool} timed out after 1500 ms`));
    // A well-formed answer whose content is not a list is an error, not an empty result.
    const invalid = await rejectsWithin(h.call("mcp__hostile__bad-content"), 2_000);
    expect(invalid.message).toMatch(/^hostile\/bad-content: the server answered with an invalid result \(content is not a list\)$/);
    // Binary garbage before a correct answer does not lose the answer.
    expect(textOf(await h.call("mcp__hostile__binary"))).toBe("after binary");
    expect(h.status("hostile").state).toBe("connected");
    expect(textOf(await h.call("mcp__hostile__echo", { text: "fine" }))).toBe("fine");
    await expectBystanderWorks(h);
  }, 30_000);
});

describe("a deeply nested schema", () => {
  it("at 5,000 levels leaves out only that tool (saying why in the server's log); its sibling and other servers work", async () => {
    const h = await startHost({ deep: fixtureServer("deep-schema", { FIXTURE_DEPTH: "5000" }), bystander });
    await h.waitForState("deep", "connected", 15_000);
    await ready(h, "deep", 1);
    await h.host.flushTools(); // whatever the host will offer of this catalog has reached Pi
    expect([...h.sink.active].filter((name) => name.startsWith("mcp__deep__"))).toEqual(["mcp__deep__echo"]);
    expect(h.host.server("deep")!.log.text()).toMatch(
      /left out tool "deep": its definition (is nested more than 1000 levels deep|cannot be serialized)/,
    );
    expect(textOf(await h.call("mcp__deep__echo", { text: "sibling" }))).toBe("sibling");
    await expectBystanderWorks(h);
  });

  it("at 100 levels is offered and validates arguments nested as deep", async () => {
    const h = await startHost({ deep: fixtureServer("deep-schema", { FIXTURE_DEPTH: "100" }), bystander });
    await ready(h, "deep", 2);
    let args: Record<string, unknown> = { leaf: "bottom" };
    for (let level = 1; level < 100; level++) args = { a: args };
    expect(textOf(await h.call("mcp__deep__deep", args))).toBe("deep called");
    let wrong: Record<string, unknown> = { leaf: 42 };
    for (let level = 1; level < 100; level++) wrong = { a: wrong };
    await expect(h.call("mcp__deep__deep", wrong)).rejects.toThrow(/^deep\/deep: arguments does not match its schema/);
    await expectBystanderWorks(h);
  });

  it("keeps an ajv stack overflow on a 5,000-level schema inside that one check", () => {
    let schema: Record<string, unknown> = { type: "object", properties: { leaf: { type: "string" } } };
    for (let level = 1; level < 5_000; level++) schema = { type: "object", properties: { a: schema } };
    const schemas = new LazySchemas();
    const check = schemas.check(schema, {}, "arguments");
    // Either ajv manages, or the failure is this check's error (cached), never a throw.
    if (!check.ok) expect(check.message).toMatch(/^arguments schema cannot be compiled: /);
    expect(schemas.check({ type: "object", properties: { x: { type: "number" } } }, { x: 1 }, "arguments")).toEqual({ ok: true });
  });
});
