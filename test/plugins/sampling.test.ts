/**
 * The sampling plugin in-process (with the result mappers, to read the tool
 * results as text; fixture servers over the SDK's in-memory transport pair):
 *
 * - `sampling: { tools: {} }` is declared only where the host has Pi's model;
 *   without it a server sees a client without sampling.
 * - A server's `sampling/createMessage` is answered with Pi's model only
 *   during a tool call on that connection (in both eras: a 2025 request, or a
 *   2026-07-28 input request), one model request each, never a turn; asked
 *   outside a tool call it is refused, and one call may ask at most
 *   MAX_SAMPLING_PER_CALL times.
 * - A request that offers tools gets the model's tool-use blocks back.
 */
import { inputRequired, inputResponse, fromJsonSchema } from "@modelcontextprotocol/server";
import { afterEach, describe, expect, it } from "vitest";
import { ResultMappingPlugin } from "../../plugins/result-mapping/index.ts";
import { SamplingPlugin, toSamplingRequest } from "../../plugins/sampling/index.ts";
import { MAX_IMAGES_PER_MESSAGE, MAX_SAMPLING_PER_CALL } from "../../src/kernel/limits.ts";
import { JPEG_2X2, SVG, png } from "../fixtures/images/encode.mjs";
import type { ModelService, SamplingRequest, SamplingResult } from "../../src/kernel/services.ts";
import { textOf } from "../helpers/host.ts";
import { type FixtureServer, pluginHost, stopAllHosts } from "./harness.ts";

afterEach(stopAllHosts);

const WEATHER = {
  name: "get_weather",
  description: "The weather in a city.",
  inputSchema: { type: "object" as const, properties: { city: { type: "string" } } },
};

/** A server whose `ask` {prompt, withTools} samples once (an input request), `ask_many` {times} samples repeatedly (2025 era). */
function sampler(era: "legacy" | "modern"): FixtureServer {
  return {
    era,
    options: { capabilities: { tools: {} } },
    build(server) {
      server.registerTool(
        "ask",
        {
          inputSchema: fromJsonSchema({
            type: "object",
            properties: { prompt: { type: "string" }, withTools: { type: "boolean" } },
            required: ["prompt"],
          }),
        },
        (input, ctx) => {
          const args = input as { prompt: string; withTools?: boolean };
          const answer = inputResponse(ctx.mcpReq.inputResponses, "sample");
          if (answer.kind === "sampling") return { content: [{ type: "text", text: JSON.stringify(answer.result) }] };
          return inputRequired({
            inputRequests: {
              sample: inputRequired.createMessage({
                messages: [{ role: "user", content: { type: "text", text: args.prompt } }],
                systemPrompt: "Be brief.",
                maxTokens: 50,
                ...(args.withTools && { tools: [WEATHER] }),
              }),
            },
          });
        },
      );
      server.registerTool(
        "ask_many",
        { inputSchema: fromJsonSchema({ type: "object", properties: { times: { type: "number" } } }) },
        async (input, ctx) => {
          const args = input as { times: number };
          const outcomes: string[] = [];
          for (let index = 0; index < args.times; index++) {
            outcomes.push(
              await ctx.mcpReq
                .requestSampling({ messages: [{ role: "user", content: { type: "text", text: `#${index}` } }], maxTokens: 5 })
                .then(
                  () => "answered",
                  (error: Error) => `refused: ${error.message}`,
                ),
            );
          }
          return { content: [{ type: "text", text: outcomes.join("\n") }] };
        },
      );
    },
  };
}

/** Pi's model as a stand-in: records each request; answers text, or a tool call when tools are offered. */
function fakeModel(): ModelService & { readonly requests: SamplingRequest[] } {
  const requests: SamplingRequest[] = [];
  return {
    requests,
    async complete(request): Promise<SamplingResult> {
      requests.push(request);
      if (request.tools?.length)
        return {
          model: "faux-1",
          stopReason: "toolUse",
          content: [{ type: "tool_use", id: "call-1", name: "get_weather", input: { city: "Paris" } }],
        };
      return { model: "faux-1", stopReason: "endTurn", content: [{ type: "text", text: "Short answer." }] };
    },
  };
}

describe.each(["legacy", "modern"] as const)("a %s-era server", (era) => {
  it("samples Pi's model during a tool call: one model request with the server's messages, its answer returned", async () => {
    const model = fakeModel();
    const h = await pluginHost([new SamplingPlugin(), new ResultMappingPlugin()], { docs: sampler(era) }, { services: { model } });
    await h.waitForTools(2, { server: "docs" });
    const answer = JSON.parse(textOf(await h.call("mcp__docs__ask", { prompt: "Why?" })));
    expect(answer).toMatchObject({
      role: "assistant",
      model: "faux-1",
      stopReason: "endTurn",
      content: { type: "text", text: "Short answer." },
    });
    expect(model.requests).toEqual([
      { systemPrompt: "Be brief.", messages: [{ role: "user", content: [{ type: "text", text: "Why?" }] }], maxTokens: 50 },
    ]);
    expect(h.host.server("docs")!.log.text()).toMatch(/\[pi-mcp\] sampling: faux-1 answered in \d+ ms \(endTurn\)/);
  });

  it("gives a request that offers tools the model's tool-use blocks", async () => {
    const model = fakeModel();
    const h = await pluginHost([new SamplingPlugin(), new ResultMappingPlugin()], { docs: sampler(era) }, { services: { model } });
    await h.waitForTools(2, { server: "docs" });
    const answer = JSON.parse(textOf(await h.call("mcp__docs__ask", { prompt: "Weather?", withTools: true })));
    expect(answer).toMatchObject({
      stopReason: "toolUse",
      content: [{ type: "tool_use", id: "call-1", name: "get_weather", input: { city: "Paris" } }],
    });
    expect(model.requests[0]!.tools).toEqual([WEATHER]);
  });
});

describe("a 2025-era server", () => {
  it("is refused sampling outside a tool call: Pi's model is not asked", async () => {
    const model = fakeModel();
    const h = await pluginHost([new SamplingPlugin()], { docs: sampler("legacy") }, { services: { model } });
    await h.waitForTools(2, { server: "docs" });
    await expect(
      h
        .server("docs")
        .instance()
        .server.createMessage({ messages: [{ role: "user", content: { type: "text", text: "mine" } }], maxTokens: 5 }),
    ).rejects.toThrow(/only available while a tool call from this client is in progress/);
    expect(model.requests).toEqual([]);
    expect(h.host.server("docs")!.log.text()).toContain("[pi-mcp] sampling refused: the server asked outside a tool call");
  });

  it(`may sample at most ${MAX_SAMPLING_PER_CALL} times in one tool call`, async () => {
    const model = fakeModel();
    const h = await pluginHost([new SamplingPlugin(), new ResultMappingPlugin()], { docs: sampler("legacy") }, { services: { model } });
    await h.waitForTools(2, { server: "docs" });
    const outcomes = textOf(await h.call("mcp__docs__ask_many", { times: MAX_SAMPLING_PER_CALL + 1 })).split("\n");
    expect(outcomes.slice(0, MAX_SAMPLING_PER_CALL)).toEqual(Array(MAX_SAMPLING_PER_CALL).fill("answered"));
    expect(outcomes[MAX_SAMPLING_PER_CALL]).toMatch(/^refused: .*at most 10 sampling requests/);
    expect(model.requests).toHaveLength(MAX_SAMPLING_PER_CALL);
  });

  it("sees a client without sampling where the host has no model", async () => {
    const h = await pluginHost([new SamplingPlugin(), new ResultMappingPlugin()], { docs: sampler("legacy") });
    await h.waitForTools(2, { server: "docs" });
    expect(h.server("docs").initializeCapabilities()).toBeDefined();
    expect(h.server("docs").initializeCapabilities()).not.toHaveProperty("sampling");
    expect(textOf(await h.call("mcp__docs__ask_many", { times: 1 }))).toMatch(/^refused: /);
  });
});

describe("images in a sampling request", () => {
  it(`give the model only images a provider takes, at most ${MAX_IMAGES_PER_MESSAGE} in the request: each other one becomes a line saying why`, () => {
    const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");
    const pixels = Array.from({ length: 25 }, (_, index) => ({
      type: "image",
      data: b64(png(1, 1, [index, 1, 1])),
      mimeType: "image/png",
    }));
    const request = toSamplingRequest({
      messages: [
        {
          role: "user",
          content: [
            { type: "image", data: b64(SVG), mimeType: "image/svg+xml" },
            { type: "image", data: "not base64!", mimeType: "image/png" },
            { type: "image", data: b64(JPEG_2X2), mimeType: "image/png" },
          ],
        },
        { role: "user", content: pixels },
      ],
      maxTokens: 10,
    });
    const content = request.messages.flatMap((message) => message.content);
    const images = content.filter((block) => block.type === "image");
    expect(images).toHaveLength(MAX_IMAGES_PER_MESSAGE);
    expect(images[0]).toEqual({ type: "image", data: b64(JPEG_2X2), mimeType: "image/jpeg" });
    const lines = content.flatMap((block) => (block.type === "text" ? [block.text] : []));
    expect(lines.slice(0, 2)).toEqual([
      "[image image/svg+xml omitted: models take only PNG, JPEG, GIF or WebP images, not image/svg+xml]",
      "[image image/png omitted: its data is not valid base64]",
    ]);
    expect(lines.slice(2)).toEqual(
      Array.from(
        { length: 6 },
        () => `[image image/png omitted: the request already holds ${MAX_IMAGES_PER_MESSAGE} images, the most one may carry]`,
      ),
    );
  });
});
