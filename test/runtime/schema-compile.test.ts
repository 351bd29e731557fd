/**
 * "Compiles each exact validator once on first use": a tool's input and output
 * schemas are compiled by ajv the first time the tool is called, exactly as
 * the server advertised them, and never again for later calls; a schema that
 * cannot be compiled is tried once too, and fails every call of its tool alone.
 */
import { Ajv2020 } from "ajv/dist/2020.js";
import { afterEach, expect, it, vi } from "vitest";
import { pluginHost, stopAllHosts } from "../plugins/harness.ts";

const INPUT = { type: "object" as const, properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] };
const OUTPUT = { type: "object" as const, properties: { sum: { type: "number" } }, required: ["sum"] };
/** `type` must be a type name: ajv refuses to compile this. */
const MALFORMED = { type: "object" as const, properties: { x: { type: "no-such-type" } } };

afterEach(async () => {
  vi.restoreAllMocks();
  await stopAllHosts();
});

it("compiles each tool's exact input and output schema once, on the first call, and a malformed one once", async () => {
  const compile = vi.spyOn(Ajv2020.prototype, "compile");
  const h = await pluginHost([], {
    calc: {
      era: "legacy",
      options: { capabilities: { tools: {} } },
      build(server) {
        server.server.setRequestHandler("tools/list", () => ({
          tools: [
            { name: "add", inputSchema: INPUT, outputSchema: OUTPUT },
            { name: "broken", inputSchema: MALFORMED },
          ],
        }));
        server.server.setRequestHandler("tools/call", (request) => {
          const { a = 0, b = 0 } = (request.params.arguments ?? {}) as { a?: number; b?: number };
          return { content: [{ type: "text", text: String(a + b) }], structuredContent: { sum: a + b } };
        });
      },
    },
  });
  await h.waitForTools(2, { server: "calc" });
  expect(compile).not.toHaveBeenCalled(); // registered without eager validation

  for (const [a, b] of [
    [1, 2],
    [3, 4],
    [5, 6],
  ]) {
    const outcome = await h.call("mcp__calc__add", { a, b });
    expect(outcome.isError).toBe(false);
    expect(outcome.details.outputSchemaError).toBeUndefined(); // checked, and it matched
  }
  expect(compile).toHaveBeenCalledTimes(2);
  expect(compile.mock.calls.map(([schema]) => schema)).toEqual([INPUT, OUTPUT]);

  for (let call = 0; call < 2; call++) {
    await expect(h.call("mcp__calc__broken", { x: 1 })).rejects.toThrow(/arguments schema cannot be compiled/);
  }
  expect(compile).toHaveBeenCalledTimes(3);
  expect(compile.mock.calls[2]![0]).toEqual(MALFORMED);
});
