// A server's schema is untrusted input, its regular expressions too: a
// `pattern` or `patternProperties` that backtracks catastrophically in V8's
// RegExp (`^(a+)+$` against 28 "a" then "!": seconds to tens of seconds, doubling per
// character) must not freeze the process. pi-mcp checks schemas with a
// linear-time engine (RE2), and the schema Pi gets for its own argument check
// carries no pattern at all (Pi's validator runs them with RegExp).
import { afterEach, describe, expect, it } from "vitest";
import { schemaForPi } from "../../src/runtime/schemas.ts";
import { fixtureServer, startHost, stopAllHosts, textOf } from "../helpers/host.ts";

afterEach(() => stopAllHosts());

const BACKTRACKS = `${"a".repeat(28)}!`;
/** Far above what the check takes in linear time, far below what the backtracking one takes. */
const QUICK_MS = 2_000;

async function timed<T>(work: Promise<T>): Promise<{ value: T | Error; ms: number }> {
  const started = performance.now();
  const value = await work.catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));
  return { value, ms: performance.now() - started };
}

async function redosHost() {
  const h = await startHost({ r: fixtureServer("redos") });
  await h.waitForTools(4, { server: "r" });
  return h;
}

describe("schema patterns run in linear time", () => {
  it("an input pattern that backtracks exponentially is checked at once: the arguments are refused naming the schema, and matching ones pass", async () => {
    const h = await redosHost();
    const refused = await timed(h.call("mcp__r__echo", { text: BACKTRACKS }));
    expect(refused.ms).toBeLessThan(QUICK_MS);
    expect((refused.value as Error).message).toMatch(
      /^r\/echo: arguments does not match its schema: arguments\/text must match pattern "\^\(a\+\)\+\$"/,
    );
    expect(textOf(await h.call("mcp__r__echo", { text: "aaaa" }))).toBe("echo aaaa");
  });

  it("patternProperties that backtrack exponentially are checked at once: a key matching none is refused, one matching passes", async () => {
    const h = await redosHost();
    const refused = await timed(h.call("mcp__r__keys", { [`${"b".repeat(28)}!`]: "x" }));
    expect(refused.ms).toBeLessThan(QUICK_MS);
    expect((refused.value as Error).message).toMatch(/arguments does not match its schema: arguments must NOT have additional properties/);
    expect(textOf(await h.call("mcp__r__keys", { bbb: "x" }))).toBe("keys bbb");
  });

  it("an output-schema pattern that backtracks exponentially is checked at once: the mismatch is reported with the result, a match is not", async () => {
    const h = await redosHost();
    const reported = await timed(h.call("mcp__r__report", { text: BACKTRACKS }));
    expect(reported.ms).toBeLessThan(QUICK_MS);
    const outcome = reported.value as Awaited<ReturnType<typeof h.call>>;
    expect(outcome.details.outputSchemaError).toBe(
      'structured content does not match its schema: structured content/v must match pattern "^(a+)+$"',
    );
    expect((await h.call("mcp__r__report", { text: "aaa" })).details.outputSchemaError).toBeUndefined();
  });

  it("a pattern the linear engine cannot run (a lookahead) is not checked, and its tool still works", async () => {
    const h = await redosHost();
    expect(textOf(await h.call("mcp__r__lookahead", { text: "y" }))).toBe("lookahead y");
    await expect(h.call("mcp__r__lookahead", { text: 1 })).rejects.toThrow(/arguments\/text must be string/);
  });
});

describe("the input schema Pi checks arguments with", () => {
  it("has every pattern and patternProperties removed (with the additionalProperties they qualify), and is otherwise the server's schema", () => {
    const schema = {
      type: "object",
      properties: {
        text: { type: "string", pattern: "^(a+)+$", minLength: 1 },
        pattern: { type: "string", description: "a property named pattern stays" },
        list: { type: "array", items: { type: "string", pattern: "x+" }, prefixItems: [{ pattern: "y" }] },
        nested: {
          anyOf: [
            { type: "object", patternProperties: { "^(b+)+$": {} }, additionalProperties: false, properties: { c: { pattern: "c" } } },
          ],
        },
      },
      propertyNames: { pattern: "^[a-z]+$" },
      $defs: { d: { type: "string", pattern: "d+", default: { pattern: "a default keeps its fields" } } },
      required: ["text"],
    };
    const before = JSON.stringify(schema);
    expect(schemaForPi(schema)).toEqual({
      type: "object",
      properties: {
        text: { type: "string", minLength: 1 },
        pattern: { type: "string", description: "a property named pattern stays" },
        list: { type: "array", items: { type: "string" }, prefixItems: [{}] },
        nested: { anyOf: [{ type: "object", properties: { c: {} } }] },
      },
      propertyNames: {},
      $defs: { d: { type: "string", default: { pattern: "a default keeps its fields" } } },
      required: ["text"],
    });
    expect(JSON.stringify(schema)).toBe(before); // the server's schema (what pi-mcp checks) is untouched
    const plain = { type: "object", properties: { a: { type: "number" } } };
    expect(schemaForPi(plain)).toBe(plain);
  });
});
