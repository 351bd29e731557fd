// The Pi ModelService (src/pi/model.ts) against a stand-in for ctx.modelRegistry:
// how a SamplingRequest becomes a pi-ai context and request options, how the
// answer comes back, and that it can always be cancelled.
import { describe, expect, it } from "vitest";
import { piModelService, withStopSequences, type ModelSource } from "../../src/pi/model.ts";
import type { SamplingRequest } from "../../src/kernel/services.ts";

const MODEL = {
  id: "claude-x",
  name: "Claude X",
  api: "anthropic-messages",
  provider: "anthropic",
  maxTokens: 1000,
  input: ["text", "image"],
};

interface Call {
  model: unknown;
  context: any;
  options: any;
}

/** A ctx stand-in whose registry answers with `reply` (an AssistantMessage-like object) and records the calls. */
function source(reply: Partial<Record<string, unknown>> | ((call: Call) => Promise<unknown>), model: unknown = MODEL) {
  // (pass null for "no model selected")
  const calls: Call[] = [];
  const ctx = {
    model: model ?? undefined,
    modelRegistry: {
      complete: async (m: unknown, context: unknown, options: unknown) => {
        const call = { model: m, context, options };
        calls.push(call);
        if (typeof reply === "function") return reply(call);
        return {
          role: "assistant",
          content: [],
          api: MODEL.api,
          provider: MODEL.provider,
          model: MODEL.id,
          stopReason: "stop",
          timestamp: 0,
          ...reply,
        };
      },
    },
  };
  return { ctx: ctx as unknown as ModelSource, calls };
}

const signal = () => new AbortController().signal;

describe("the Pi model service", () => {
  it("sends the system prompt, the messages (text, images, tool use and results) and the tools to the active model", async () => {
    const { ctx, calls } = source({ content: [{ type: "text", text: "fine" }] });
    const request: SamplingRequest = {
      systemPrompt: "You are terse.",
      maxTokens: 50,
      temperature: 0.2,
      tools: [{ name: "lookup", description: "Looks up", inputSchema: { type: "object", properties: { q: { type: "string" } } } }],
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "Find x." },
            { type: "image", data: "AAAA", mimeType: "image/png" },
          ],
        },
        {
          role: "assistant",
          content: [
            { type: "text", text: "Looking." },
            { type: "tool_use", id: "t1", name: "lookup", input: { q: "x" } },
          ],
        },
        { role: "user", content: [{ type: "tool_result", toolUseId: "t1", content: [{ type: "text", text: "x=1" }], isError: false }] },
      ],
    };
    const result = await piModelService(ctx)!.complete(request, signal());
    expect(result).toEqual({ model: "claude-x", content: [{ type: "text", text: "fine" }], stopReason: "endTurn" });
    const { context, options, model } = calls[0]!;
    expect(model).toBe(MODEL);
    expect(context.systemPrompt).toBe("You are terse.");
    expect(context.tools).toEqual([
      { name: "lookup", description: "Looks up", parameters: { type: "object", properties: { q: { type: "string" } } } },
    ]);
    expect(context.messages).toMatchObject([
      {
        role: "user",
        content: [
          { type: "text", text: "Find x." },
          { type: "image", data: "AAAA", mimeType: "image/png" },
        ],
      },
      {
        role: "assistant",
        api: "anthropic-messages",
        provider: "anthropic",
        model: "claude-x",
        stopReason: "toolUse",
        content: [
          { type: "text", text: "Looking." },
          { type: "toolCall", id: "t1", name: "lookup", arguments: { q: "x" } },
        ],
      },
      { role: "toolResult", toolCallId: "t1", toolName: "lookup", content: [{ type: "text", text: "x=1" }], isError: false },
    ]);
    expect(options).toMatchObject({ maxTokens: 50, temperature: 0.2 });
    expect(options.signal).toBeInstanceOf(AbortSignal);
    expect(options.onPayload).toBeUndefined();
  });

  it("keeps maxTokens within the model's own limit", async () => {
    const { ctx, calls } = source({ content: [{ type: "text", text: "ok" }] });
    await piModelService(ctx)!.complete(
      { maxTokens: 100_000, messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] },
      signal(),
    );
    expect(calls[0]!.options.maxTokens).toBe(1000);
    expect(calls[0]!.options.temperature).toBeUndefined();
  });

  it("returns the model's tool calls as tool-use blocks with stopReason toolUse", async () => {
    const { ctx } = source({
      stopReason: "toolUse",
      content: [
        { type: "thinking", thinking: "hmm" },
        { type: "toolCall", id: "c9", name: "lookup", arguments: { q: "y" } },
      ],
    });
    const request: SamplingRequest = {
      maxTokens: 10,
      messages: [{ role: "user", content: [{ type: "text", text: "?" }] }],
      tools: [{ name: "lookup", inputSchema: { type: "object" } }],
    };
    expect(await piModelService(ctx)!.complete(request, signal())).toEqual({
      model: "claude-x",
      content: [{ type: "tool_use", id: "c9", name: "lookup", input: { q: "y" } }],
      stopReason: "toolUse",
    });
  });

  it("maps length to maxTokens, and a stop sequence to stopSequence (on the wire where the API takes one, and by cutting the text)", async () => {
    const { ctx, calls } = source({ stopReason: "length", content: [{ type: "text", text: "one two" }] });
    const base: SamplingRequest = { maxTokens: 10, messages: [{ role: "user", content: [{ type: "text", text: "count" }] }] };
    expect((await piModelService(ctx)!.complete(base, signal())).stopReason).toBe("maxTokens");
    const cut = source({ content: [{ type: "text", text: "one two STOP three" }] });
    expect(await piModelService(cut.ctx)!.complete({ ...base, stopSequences: ["STOP", "three"] }, signal())).toEqual({
      model: "claude-x",
      content: [{ type: "text", text: "one two " }],
      stopReason: "stopSequence",
    });
    const native = source({ content: [{ type: "text", text: "one two " }], rawStopReason: "stop_sequence" });
    expect((await piModelService(native.ctx)!.complete({ ...base, stopSequences: ["STOP"] }, signal())).stopReason).toBe("stopSequence");
    const payload = await cut.calls[0]!.options.onPayload({ model: "claude-x", max_tokens: 10 });
    expect(payload).toEqual({ model: "claude-x", max_tokens: 10, stop_sequences: ["STOP", "three"] });
    expect(calls[0]!.options.onPayload).toBeUndefined();
  });

  it("puts stop sequences where each provider API expects them", () => {
    const stops = ["a", "b", "c", "d", "e", "f"];
    expect(withStopSequences("openai-completions", { model: "m" }, stops)).toEqual({ model: "m", stop: ["a", "b", "c", "d"] });
    expect(withStopSequences("google-generative-ai", { config: { temperature: 1 } }, stops)).toEqual({
      config: { temperature: 1, stopSequences: ["a", "b", "c", "d", "e"] },
    });
    expect(withStopSequences("bedrock-converse-stream", { inferenceConfig: { maxTokens: 5 } }, ["x"])).toEqual({
      inferenceConfig: { maxTokens: 5, stopSequences: ["x"] },
    });
    expect(withStopSequences("openai-responses", { model: "m" }, ["x"])).toBeUndefined();
  });

  it("fails with the provider's error, and when Pi has no model selected", async () => {
    const { ctx } = source({ stopReason: "error", errorMessage: "429 rate limited" });
    const request: SamplingRequest = { maxTokens: 10, messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] };
    await expect(piModelService(ctx)!.complete(request, signal())).rejects.toThrow("the model request failed: 429 rate limited");
    const none = source({}, null);
    await expect(piModelService(none.ctx)!.complete(request, signal())).rejects.toThrow("Pi has no model selected");
  });

  it("settles at once when cancelled, even if the provider does not notice", async () => {
    let providerCalled: () => void = () => {};
    const called = new Promise<void>((resolve) => (providerCalled = resolve));
    const { ctx, calls } = source(() => {
      providerCalled();
      return new Promise(() => {});
    });
    const controller = new AbortController();
    const request: SamplingRequest = { maxTokens: 10, messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] };
    const pending = piModelService(ctx)!.complete(request, controller.signal);
    await called; // the provider has the request and will never answer
    controller.abort();
    // Settled by the abort itself: nothing else could end it.
    await expect(pending).rejects.toThrow();
    expect(calls[0]!.options.signal.aborted).toBe(true);
    await expect(piModelService(ctx)!.complete(request, AbortSignal.abort())).rejects.toThrow();
    expect(calls).toHaveLength(1);
  });

  it("is absent on a Pi without modelRegistry.complete (no sampling capability there)", () => {
    expect(piModelService({ model: MODEL, modelRegistry: {} } as unknown as ModelSource)).toBeUndefined();
  });
});
