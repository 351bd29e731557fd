// pi-mcp scans JSON text by its structure where it must not parse it (the
// nesting depth of a tool definition, line breaks in large structured
// content): what stands inside a string is text, never structure.
import { afterEach, expect, it } from "vitest";
import { printJson } from "../../src/safety/json.ts";
import { fixtureServer, startHost, stopAllHosts } from "../helpers/host.ts";

afterEach(() => stopAllHosts());

it("a tool whose definition is flat but whose description holds 3,000 brackets is offered: brackets in a string are not nesting", async () => {
  const h = await startHost({ deep: fixtureServer("deep-schema", { FIXTURE_DEPTH: "3", FIXTURE_BRACKETS: "1" }) });
  await h.waitForState("deep", "connected");
  await h.host.flushTools();
  expect([...h.sink.active].sort()).toEqual(["mcp__deep__brackets", "mcp__deep__deep", "mcp__deep__echo"]);
});

it("large structured content broken into lines after commas keeps every string whole: commas and brackets inside strings stay", () => {
  // Deep enough that indenting would more than double it, so the compact text is broken after commas.
  let value: Record<string, unknown> = { text: 'one, two, {three}, [four], "five, six"' };
  for (let level = 0; level < 400; level++) value = { [`key, ${level}`]: value, note: "a, b, [c], {d}" };
  const text = printJson(value);
  expect(text).not.toContain("\n  "); // the broken compact form, not the indented one
  expect(text.split("\n").length).toBeGreaterThan(400);
  expect(JSON.parse(text)).toEqual(value);
});
