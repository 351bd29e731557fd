/**
 * The heap pacing held while a big catalog registers (src/pi/heap-pacing.ts):
 * V8's growing factor is set while any hold lasts and given back to V8 when
 * the last one ends, counted across module copies (globalThis), and never
 * touched when Pi was started with its own.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

const flags: string[] = [];
vi.mock("node:v8", async (importOriginal) => ({
  ...(await importOriginal<typeof import("node:v8")>()),
  setFlagsFromString: (flag: string) => flags.push(flag),
}));

const { holdHeapPacing, PACED_GROWTH_PERCENT } = await import("../../src/pi/heap-pacing.ts");

describe("heap pacing", () => {
  const nodeOptions = process.env.NODE_OPTIONS;
  beforeEach(() => {
    flags.length = 0;
    delete process.env.NODE_OPTIONS;
  });
  afterEach(() => {
    if (nodeOptions === undefined) delete process.env.NODE_OPTIONS;
    else process.env.NODE_OPTIONS = nodeOptions;
  });

  it("sets V8's growing factor for the first hold and gives it back after the last, once each", () => {
    const first = holdHeapPacing();
    const second = holdHeapPacing();
    expect(flags).toEqual([`--heap-growing-percent=${PACED_GROWTH_PERCENT}`]);
    first();
    first(); // a second release of the same hold counts once
    expect(flags).toHaveLength(1);
    second();
    expect(flags).toEqual([`--heap-growing-percent=${PACED_GROWTH_PERCENT}`, "--heap-growing-percent=0"]);
  });

  it("counts holds across module copies (Pi imports pi-mcp afresh on /reload)", async () => {
    vi.resetModules();
    const copy = await import("../../src/pi/heap-pacing.ts");
    const held = holdHeapPacing();
    const other = copy.holdHeapPacing();
    held();
    expect(flags).toHaveLength(1);
    other();
    expect(flags.at(-1)).toBe("--heap-growing-percent=0");
  });

  it("leaves a growing factor Pi was started with alone", () => {
    process.env.NODE_OPTIONS = "--heap_growing_percent=20";
    holdHeapPacing()();
    expect(flags).toEqual([]);
  });
});
