/**
 * What Pi keeps of a server tool result's details (src/pi/tools.ts,
 * keptDetails): a session keeps every result, so provenance the Pi name
 * already says exactly is left out, as Pi's own tools keep no details; what
 * the name cannot say, and every other detail, is kept.
 */
import { describe, expect, it } from "vitest";
import { keptDetails } from "../../src/pi/tools.ts";

describe("the details Pi keeps of a server tool result", () => {
  it("keeps none when they only name the server and tool its Pi name says exactly", () => {
    expect(keptDetails({ server: "out", tool: "big" }, "mcp__out__big")).toBeUndefined();
  });

  it("keeps the names where the Pi name cannot say them exactly (sanitized, suffixed, a server name with __)", () => {
    const sanitized = { server: "my docs", tool: "get.page" };
    expect(keptDetails(sanitized, "mcp__my_docs__get_page")).toBe(sanitized);
    const suffixed = { server: "a", tool: "b" };
    expect(keptDetails(suffixed, "mcp__a__b_3f2a")).toBe(suffixed);
    const doubled = { server: "a__x", tool: "y" };
    expect(keptDetails(doubled, "mcp__a__x__y")).toBe(doubled);
    // The first __ ends the server: a tool name with __ is said exactly.
    expect(keptDetails({ server: "a", tool: "x__y" }, "mcp__a__x__y")).toBeUndefined();
  });

  it("keeps everything a result adds beyond the names (structured content, a spill path, an output-schema failure)", () => {
    const spilled = { server: "out", tool: "big", spillPath: "/tmp/x" };
    expect(keptDetails(spilled, "mcp__out__big")).toBe(spilled);
    const structured = { server: "out", tool: "big", structuredContent: { a: 1 } };
    expect(keptDetails(structured, "mcp__out__big")).toBe(structured);
  });
});
