// Tool results whose structured content has a hostile shape, small on the
// wire: nested thousands of levels deep (Pi structured-clones the transcript,
// which overflows at ~1,600 levels and then fails every model request of the
// session), or deep and wide at once (indented, 2 MB of JSON became a 306 MB
// Result Spill). The content is cut at MAX_NESTING_DEPTH like definitions,
// with a note for the model, and printed in a size bounded by the message.
import { readFile, stat } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_NESTING_DEPTH } from "../../src/kernel/limits.ts";
import { CUT_MARKER, jsonShape } from "../../src/safety/json.ts";
import { fixtureServer, startHost, stopAllHosts, textOf, until } from "../helpers/host.ts";
import { fakeServices } from "../helpers/services.ts";

afterEach(() => stopAllHosts());

async function deepHost() {
  const h = await startHost({ deep: fixtureServer("deep-results") }, { requestTimeoutMs: 60_000 });
  await h.waitForTools(3, { server: "deep" });
  return h;
}

describe("structured content nested deeper than the cut", () => {
  for (const depth of [2_500, 6_000]) {
    it(`${depth} levels: the result's details are cut at ${MAX_NESTING_DEPTH} levels, survive a structured clone (what Pi does to the transcript), and the model is told of the cut`, async () => {
      const h = await deepHost();
      const outcome = await h.call("mcp__deep__deep", { depth });
      expect(jsonShape(outcome.details.structuredContent).depth).toBe(MAX_NESTING_DEPTH);
      expect(() => structuredClone(outcome)).not.toThrow();
      const text = textOf(outcome);
      expect(text).toContain(
        `[structured content nested more than ${MAX_NESTING_DEPTH} levels deep: deeper values are replaced by "${CUT_MARKER}"]`,
      );
      expect(text).toContain(`"${CUT_MARKER}"`);
      expect(textOf(await h.call("mcp__deep__ok", {}))).toBe("fine");
    }, 60_000);
  }

  it(`content at the cut (${MAX_NESTING_DEPTH} levels) is kept whole, without a note`, async () => {
    const h = await deepHost();
    // The fixture wraps the nest in {"v": …}: one level more.
    const outcome = await h.call("mcp__deep__deep", { depth: MAX_NESTING_DEPTH - 1 });
    expect(jsonShape(outcome.details.structuredContent).depth).toBe(MAX_NESTING_DEPTH);
    expect(textOf(outcome)).not.toContain("levels deep");
    expect(textOf(outcome)).toContain('"leaf"');
  });
});

describe("structured content deep and wide at once", () => {
  it("1,000 levels of 300 keys (about 2 MB on the wire) give a Result Spill of a few MB, not hundreds (no indentation where it would multiply the size)", async () => {
    const h = await deepHost();
    const outcome = await h.call("mcp__deep__wide_deep", { depth: 999, width: 300 });
    const spill = outcome.details.spillPath as string;
    expect(spill).toBeDefined();
    const { size } = await stat(spill);
    // The compact JSON is about 2.4 MB; indented it was 306 MB.
    expect(size).toBeGreaterThan(2_000_000);
    expect(size).toBeLessThan(6_000_000);
  }, 60_000);

  it("a flat result is still indented for the model", async () => {
    const h = await deepHost();
    const outcome = await h.call("mcp__deep__wide_deep", { depth: 2, width: 3 });
    expect(textOf(outcome)).toContain('[structured content]\n{\n  "v": {\n    "k0": 0,');
  });
});

describe("jsonShape counts what indentation adds", () => {
  it("exactly, for objects, arrays, empty containers and nesting", () => {
    for (const value of [{}, [], { a: 1 }, [1, [2, { b: [] }]], { a: { b: { c: [1, 2, {}] } }, d: "x" }, "scalar", null]) {
      expect(JSON.stringify(value).length + jsonShape(value).indentation, JSON.stringify(value)).toBe(
        JSON.stringify(value, null, 2).length,
      );
    }
  });
});

describe("structured content printed compact", () => {
  it("breaks lines after commas, so the model's cut text shows its start, and stays the same JSON", async () => {
    const h = await deepHost();
    const outcome = await h.call("mcp__deep__wide_deep", { depth: 999, width: 300 });
    const text = textOf(outcome);
    expect(text).toContain('[structured content]\n{"v":{"k0":0,\n"k1":0,\n');
    const spilled = await readFile(outcome.details.spillPath as string, "utf8");
    const json = spilled.slice(spilled.indexOf("[structured content]\n") + "[structured content]\n".length);
    expect(JSON.parse(json)).toEqual(outcome.details.structuredContent);
  }, 60_000);
});

describe("every result's details are cut at the nesting limit", () => {
  it("a listed resource whose _meta is nested 2,500 levels deep: the listing's details survive a structured clone, the listing still names it", async () => {
    const services = fakeServices();
    const h = await startHost({ deep: fixtureServer("deep-results") }, { services });
    await h.waitForTools(3, { server: "deep" });
    await until(() => services.piTools.active.has("list_mcp_resources"), 30_000);
    const outcome = await services.piTools.tools.get("list_mcp_resources")!.execute({ server: "deep" }, {});
    expect(textOf(outcome)).toContain("deep: res://deep (deep)");
    expect(jsonShape(outcome.details).depth).toBeLessThanOrEqual(MAX_NESTING_DEPTH + 1);
    expect(() => structuredClone(outcome)).not.toThrow();
  }, 60_000);
});
