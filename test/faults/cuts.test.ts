// What a cause quotes from a server's stderr is cut and stripped like all
// text shown to a person: a cut never splits a character (a lone surrogate
// shows as garbage and breaks some JSON readers), and bidirectional
// overrides, which reorder what a terminal shows, are stripped.
import { afterEach, describe, expect, it } from "vitest";
import { STDERR_LINE_CHARS } from "../../src/runtime/explain.ts";
import { fixtureServer, startHost, stopAllHosts } from "../helpers/host.ts";

afterEach(() => stopAllHosts());

async function causeOf(mode: string): Promise<string> {
  const h = await startHost({ s: fixtureServer("stderr-exit", { FIXTURE_STDERR: mode }) }, { retry: { maxRetries: 0 } });
  return (await h.waitForState("s", "failed", 30_000)).cause ?? "";
}

describe("stderr quoted in a cause", () => {
  it(`a line of four-byte characters is cut at ${STDERR_LINE_CHARS} characters without splitting one`, async () => {
    const cause = await causeOf("emoji");
    const quoted = /its last stderr line: (Error: 😀+)…/u.exec(cause)?.[1];
    expect(quoted, cause).toBeDefined();
    expect(quoted!.length).toBeLessThanOrEqual(STDERR_LINE_CHARS);
    expect(cause).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
    expect(() => encodeURIComponent(cause)).not.toThrow(); // a lone surrogate throws URIError
  });

  it("bidirectional overrides and isolates are stripped", async () => {
    const cause = await causeOf("bidi");
    expect(cause).toContain("its last stderr line: Error: evil isolated embedded");
    expect(cause).not.toMatch(/[\u202a-\u202e\u2066-\u2069]/);
  });
});
