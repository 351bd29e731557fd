// A result of hundreds of thousands of blocks through the result pipeline (the real kernel,
// in process): every block mapped, in order, by the mappers of its type, while Pi's event
// loop keeps turning. Its memory is measured in bench/memory.ts, not here.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { createKernel } from "../../src/composition.ts";
import { STAGE, type KernelPlugin } from "../../src/kernel/kernel.ts";
import type { HostContext } from "../../src/kernel/types.ts";
import { HostResults } from "../../src/runtime/results.ts";
import { piTruncate } from "../helpers/host.ts";

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "pi-mcp-blocks-"));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A mapper that answers for every third text block. */
const everyThird: KernelPlugin = {
  name: "every-third",
  apply(kernel) {
    kernel.hooks.mapContent.for("text").tapPromise({ name: "every-third", stage: STAGE.BEFORE_BUILTIN }, async (block) => {
      const index = Number(block.text);
      return index % 3 === 0 ? [{ type: "text", text: `third ${index}` }] : undefined;
    });
  },
};

it("maps 200,000 blocks in order (each by the mapper that takes it), and timers run while it does", async () => {
  const host = { truncate: piTruncate, redact: (text: string) => text, privateDir: root, services: {} } as unknown as HostContext;
  const results = new HostResults(createKernel({ plugins: [everyThird] }), () => host);
  const count = 200_000;
  const content = Array.from({ length: count }, (_, index) =>
    index % 1000 === 999 ? { type: "odd-type" } : { type: "text", text: String(index) },
  );
  let timerRan = false;
  setTimeout(() => {
    timerRan = true;
  }, 0);
  const origin = { server: "s", operation: "many" };
  const mapped = await results.map(origin, { content }, {});
  // Mapping is not one uninterrupted run of microtasks: Pi's input, other servers and timers get their turns.
  expect(timerRan).toBe(true);
  expect(mapped.blocks).toHaveLength(count);
  const expected = (index: number) =>
    index % 1000 === 999 ? '[unsupported MCP content type "odd-type"]' : index % 3 === 0 ? `third ${index}` : String(index);
  expect(mapped.blocks.every((block, index) => block.source === content[index] && block.output?.length === 1)).toBe(true);
  expect(mapped.blocks.map((block) => block.output?.[0])).toEqual(content.map((_, index) => ({ type: "text", text: expected(index) })));
  const outcome = await results.finish(origin, mapped);
  const spill = await readFile(outcome.details.spillPath as string, "utf8");
  expect(spill).toBe(Array.from({ length: count }, (_, index) => expected(index)).join("\n"));
});
