// The declared order of pi-mcp's tools (src/pi/tool-order.ts): canonical whichever server connected first.
import { describe, expect, it } from "vitest";
import { canonicalOrder, keepToolOrder, offeredToolsOf } from "../../src/pi/tool-order.ts";

/** Pi's active-tool semantics: tools that stay active keep their order, new ones are appended. */
function fakePi(active: string[], all: string[]) {
  const calls: string[][] = [];
  return {
    calls,
    getActiveTools: () => [...active],
    getAllTools: () => all.map((name) => ({ name })) as never,
    setActiveTools(names: string[]) {
      calls.push(names);
      const requested = new Set(names);
      const kept = active.filter((name) => requested.has(name));
      active = [...new Set([...kept, ...names])];
    },
  };
}

describe("the canonical order", () => {
  const offered = offeredToolsOf([
    ["mcp__a__x", "direct"],
    ["mcp__a__y", "direct"],
    ["mcp__b__z", "deferred"],
    ["mcp__c__w", "direct"],
    ["mcp__d__h", "hidden"],
  ]);

  it("is Pi's other tools, pi-mcp's direct tools in server and catalog order, the reaching tools, then loaded ones", () => {
    expect(offered).toEqual({ direct: ["mcp__a__x", "mcp__a__y", "mcp__c__w"], undeclared: ["mcp__b__z"], reaching: ["tool_search"] });
    const available = new Set(["read", "tool_search"]);
    expect(canonicalOrder(["read", "mcp__c__w", "tool_search", "mcp__a__y", "mcp__a__x"], offered, available)).toEqual([
      "read",
      "mcp__a__x",
      "mcp__a__y",
      "mcp__c__w",
      "tool_search",
    ]);
    expect(canonicalOrder(["mcp__b__z", "read", "mcp__c__w", "mcp__a__y", "mcp__a__x"], offered, available)).toEqual([
      "read",
      "mcp__a__x",
      "mcp__a__y",
      "mcp__c__w",
      "tool_search",
      "mcp__b__z",
    ]);
    // While a direct tool is not active yet (still registering) nothing is reordered.
    expect(canonicalOrder(["read", "mcp__a__x"], offered, available)).toBeUndefined();
  });

  it("is put in place with Pi's own semantics, and left alone once it is", () => {
    const pi = fakePi(["read", "mcp__c__w", "mcp__a__x", "mcp__a__y"], ["read", "tool_search", "mcp__a__x", "mcp__a__y", "mcp__c__w"]);
    expect(keepToolOrder(pi, offered)).toBe(true);
    expect(pi.getActiveTools()).toEqual(["read", "mcp__a__x", "mcp__a__y", "mcp__c__w", "tool_search"]);
    const calls = pi.calls.length;
    expect(keepToolOrder(pi, offered)).toBe(false);
    expect(pi.calls).toHaveLength(calls);
  });
});
