// The conformance script's own rules: what it scores, and that the
// expected-failures file holds nothing a host bug could hide behind.
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain ESM script without types
import { RUNS, extensionScenarios, listScenarios, readExpectedFailures, scoredScenarios, yamlList } from "../../scripts/conformance.mjs";

interface Run {
  id: string;
  revision?: string;
}

describe("scripts/conformance.mjs", () => {
  it("reads the runner's list: extension scenarios are the client ones marked only [extension]", () => {
    const listing = [
      "Server scenarios (test against a server):",
      "  - server-initialize [2025-06-18,2025-11-25]",
      "  - server-thing [extension]",
      "",
      "Client scenarios (test against a client):",
      "  - initialize [2025-06-18,2025-11-25]",
      "  - auth/resource-mismatch [draft]",
      "  - auth/client-credentials-jwt [extension]",
      "  - auth/mixed [2025-11-25,extension]",
    ].join("\n");
    expect([...extensionScenarios(listing)]).toEqual(["auth/client-credentials-jwt"]);
  });

  it("reads plain YAML lists, with comments and `- scenario:` mappings", () => {
    const text = "client:\n  # why\n  - a\n  - 'b'  # note\n  - scenario: c\n    leg: client\nother:\n  - d\n";
    expect(yamlList(text, "client")).toEqual(["a", "b", "c"]);
  });

  it("lists only MCP extension scenarios as expected failures: never a core or auth scenario of either runner", async () => {
    const expected = readExpectedFailures();
    expect(expected.checks.size).toBe(0);
    const stable = (RUNS as Run[]).find((run) => run.id === "auth")!;
    const extensions = extensionScenarios(await listScenarios(stable));
    expect(extensions.size).toBeGreaterThan(0);
    for (const scenario of expected.whole) expect(extensions.has(scenario), scenario).toBe(true);
    for (const run of (RUNS as Run[]).filter((candidate) => candidate.revision)) {
      const scored: Set<string> = scoredScenarios(run.revision!);
      for (const scenario of expected.whole) expect(scored.has(scenario), `${scenario} is scored by ${run.revision}`).toBe(false);
    }
  });

  it("runs every client scenario of 0.1.16 (its suites together are --suite all)", async () => {
    const stable = (RUNS as Run[]).find((run) => run.id === "auth")!;
    const all = [...(await listScenarios(stable)).split("Client scenarios")[1]!.matchAll(/^\s+-\s+(\S+)/gm)].map((match) => match[1]);
    const covered = new Set((RUNS as Run[]).map((run) => run.id));
    const suites = ["auth", "backcompat", "draft", "extensions"].filter((suite) => covered.has(suite));
    expect(suites).toHaveLength(4);
    // Outside the four suites are exactly the core scenarios that run one by one.
    const auth = all.filter((scenario) => scenario.startsWith("auth/"));
    expect(all.filter((scenario) => !auth.includes(scenario)).sort()).toEqual(
      ["elicitation-sep1034-client-defaults", "initialize", "sse-retry", "tools_call"].filter((id) => covered.has(id)).sort(),
    );
  });
});
