// Sampling through OUR host (the real kernel and plugins) with a stand-in ModelService:
// what reaches the model, what the server gets back, scoping, cancellation, and the
// switch that turns the feature off. Both protocol eras: 2025 server→client requests
// and 2026-07-28 multi-round input requests.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKernel } from "../../src/composition.ts";
import type { SamplingResult } from "../../src/kernel/services.ts";
import { everythingStdio, fixtureServer, startHost, stopAllHosts, textOf, until, type TestHost } from "../helpers/host.ts";
import { backgroundOutcome, fakeModel, handlerSpy, hang, HELLO } from "./interactive-helpers.ts";

// Hosts are shared within a describe block (each test scripts the model anew) and stopped at the end.
afterAll(stopAllHosts);

const json = (outcome: Awaited<ReturnType<Awaited<ReturnType<typeof startHost>>["call"]>>) => JSON.parse(textOf(outcome));

describe.each(["both", "legacy"])("sampling (fixture era: %s)", (era) => {
  const model = fakeModel();
  const spy = handlerSpy();
  let h: TestHost;
  beforeAll(async () => {
    h = await startHost(
      { interactive: fixtureServer("interactive", { FIXTURE_ERA: era }) },
      { services: { model }, kernel: createKernel({ plugins: [spy.plugin] }) },
    );
    await h.waitForTools(1, { server: "interactive" });
  });

  it("declares sampling with tools and registers its handler where the host has a model", async () => {
    expect(json(await h.call("mcp__interactive__capabilities")).sampling).toEqual({ tools: {} });
    expect(spy.methods).toContain("sampling/createMessage");
  });

  it("answers with the host's model: system prompt, text and image, maxTokens, temperature, stop sequences", async () => {
    model.script(HELLO);
    const args = {
      prompt: "Describe this.",
      systemPrompt: "Be brief.",
      maxTokens: 77,
      temperature: 0.3,
      stopSequences: ["END"],
      image: true,
    };
    const result = json(await h.call("mcp__interactive__ask_model", args));
    expect(result).toEqual({ role: "assistant", model: "fake-1", stopReason: "endTurn", content: { type: "text", text: "hello" } });
    expect(model.requests).toEqual([
      {
        systemPrompt: "Be brief.",
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "Describe this." },
              { type: "image", data: expect.any(String), mimeType: "image/png" },
            ],
          },
        ],
        maxTokens: 77,
        temperature: 0.3,
        stopSequences: ["END"],
      },
    ]);
  });

  it("gives the server the model's tool-use blocks when the request offers tools", async () => {
    model.script(() => ({
      model: "fake-1",
      content: [
        { type: "text", text: "Let me look." },
        { type: "tool_use", id: "call-1", name: "get_weather", input: { city: "Paris" } },
      ],
      stopReason: "toolUse",
    }));
    const result = json(await h.call("mcp__interactive__ask_model", { prompt: "Weather in Paris?", withTools: true }));
    expect(result).toEqual({
      role: "assistant",
      model: "fake-1",
      stopReason: "toolUse",
      content: [
        { type: "text", text: "Let me look." },
        { type: "tool_use", id: "call-1", name: "get_weather", input: { city: "Paris" } },
      ],
    });
    expect(model.requests[0]!.tools).toEqual([
      {
        name: "get_weather",
        description: "The weather in a city.",
        inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
      },
    ]);
  });

  it("passes the server's tool results back to the model (a tool loop over two requests)", async () => {
    model.script((request) =>
      request.messages.length === 1
        ? {
            model: "fake-1",
            content: [{ type: "tool_use", id: "call-7", name: "get_weather", input: { city: "Oslo" } }],
            stopReason: "toolUse",
          }
        : { model: "fake-1", content: [{ type: "text", text: "It is sunny." }], stopReason: "endTurn" },
    );
    const results = json(await h.call("mcp__interactive__tool_loop", { city: "Oslo" }));
    expect(results.map((result: SamplingResult) => result.stopReason)).toEqual(["toolUse", "endTurn"]);
    expect(model.requests[1]!.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "What is the weather in Oslo?" }] },
      { role: "assistant", content: [{ type: "tool_use", id: "call-7", name: "get_weather", input: { city: "Oslo" } }] },
      { role: "user", content: [{ type: "tool_result", toolUseId: "call-7", content: [{ type: "text", text: "Sunny in Oslo" }] }] },
    ]);
  });

  it('toolChoice "none" offers the model no tools', async () => {
    model.script(HELLO);
    await h.call("mcp__interactive__ask_model", { prompt: "Just talk.", withTools: true, toolChoice: "none" });
    expect(model.requests[0]!.tools).toBeUndefined();
  });

  it("is cancelled with the tool call that caused it", async () => {
    model.script(hang);
    const controller = new AbortController();
    const call = h.call("mcp__interactive__ask_model", { prompt: "Take your time." }, { signal: controller.signal });
    await until(() => model.signals.length === 1, 15_000);
    const aborted = Date.now();
    controller.abort();
    await expect(call).rejects.toThrow(/cancelled/);
    expect(model.signals[0]!.aborted).toBe(true);
    // Ended by the abort, well before the request timeout (10 s) could have ended it.
    expect(Date.now() - aborted).toBeLessThan(5_000);
  });
});

describe("sampling limits and scope", () => {
  const model = fakeModel();
  let h: TestHost;
  beforeAll(async () => {
    h = await startHost(
      { interactive: fixtureServer("interactive", { FIXTURE_ERA: "legacy" }) },
      { services: { model }, requestTimeoutMs: 1_500 },
    );
    await h.waitForTools(1, { server: "interactive" });
  });

  it("is bounded by the server's request timeout", async () => {
    model.script(hang);
    const started = Date.now();
    await expect(h.call("mcp__interactive__ask_model", { prompt: "Forever?" })).rejects.toThrow();
    await until(() => model.signals[0]?.aborted === true, 15_000);
    // Ended by the 1.5 s timeout: not sooner, and not never (the bound is generous for a loaded machine).
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_500);
    expect(Date.now() - started).toBeLessThan(10_000);
    // Whichever ends it first (our deadline, or the server cancelling when the tool call timed out), the model request ends.
    const log = () => h.host.server("interactive")!.log.text();
    await until(
      () => /sampling failed: (timed out after 1500 ms|cancelled by the server|the tool call it belongs to ended)/.test(log()),
      15_000,
      log,
    );
  });

  it("refuses a sampling request that arrives outside a tool call (background work), without asking the model", async () => {
    model.script(HELLO);
    expect(textOf(await h.call("mcp__interactive__background", { kind: "sampling", delayMs: 500 }))).toBe("scheduled");
    const outcome = await backgroundOutcome(h);
    expect(outcome).toMatch(/^error -1: .*only available while a tool call/);
    expect(model.requests).toEqual([]);
  });

  it("is not declared where the host has no model (the CLI): server-everything then offers no trigger-sampling-request", async () => {
    const h = await startHost({ everything: everythingStdio(), interactive: fixtureServer("interactive") }, { services: {} });
    const tools = await h.waitForTools(2, { server: "everything" });
    await h.waitForTools(1, { server: "interactive" });
    expect(tools).not.toContain("mcp__everything__trigger-sampling-request");
    expect(tools).toContain("mcp__everything__trigger-elicitation-request");
    expect(json(await h.call("mcp__interactive__capabilities")).sampling).toBeUndefined();
  });

  it("a kernel without the sampling plugin declares no capability and registers no handler, even with a model", async () => {
    const spy = handlerSpy();
    const kernel = createKernel({ disable: ["sampling"], plugins: [spy.plugin] });
    const h = await startHost(
      { everything: everythingStdio(), interactive: fixtureServer("interactive") },
      { kernel, services: { model: fakeModel() } },
    );
    const tools = await h.waitForTools(2, { server: "everything" });
    await h.waitForTools(1, { server: "interactive" });
    expect(tools).not.toContain("mcp__everything__trigger-sampling-request");
    const capabilities = json(await h.call("mcp__interactive__capabilities"));
    expect(capabilities.sampling).toBeUndefined();
    expect(capabilities.elicitation).toEqual({ form: { applyDefaults: true }, url: {} });
    expect(spy.methods).not.toContain("sampling/createMessage");
    expect(spy.methods).toContain("elicitation/create");
  });
});
