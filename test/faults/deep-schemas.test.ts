// Deeply nested tool schemas in a real Pi (1.6, print mode, the faux model).
// Every model request of Pi structured-clones the transcript, tool declarations
// included, and V8's structured clone overflows at about 1,600 nesting levels:
// pi-mcp leaves out definitions deeper than 1,000 levels (MAX_DEFINITION_DEPTH),
// and offers and runs everything below that, well past the old 256-level cut.
import { join } from "node:path";
import { expect, it } from "vitest";
import { NODE, REPO_ROOT, runPiWithMcp, usePiHome } from "../e2e/harness/pi.ts";

const home = usePiHome();

/** The deep-schema fixture: `deep` takes `{a: {a: … {leaf}}}` nested `depth` schema levels (two JSON levels each). */
const deepServer = (depth: number) => ({
  command: NODE,
  args: [join(REPO_ROOT, "test/fixtures/servers/deep-schema.mjs")],
  environment: { FIXTURE_DEPTH: String(depth) },
});

function nestedArguments(depth: number): Record<string, unknown> {
  let args: Record<string, unknown> = { leaf: "bottom" };
  for (let level = 1; level < depth; level++) args = { a: args };
  return args;
}

it("offers a valid schema nested 400 levels deep (800 JSON levels) and runs a real Pi call that fills it to the bottom", async () => {
  await home.writeSettings({ mcp: { servers: { deep: deepServer(400) } } });
  const run = await runPiWithMcp(home, "go", [
    { toolCall: { name: "mcp__deep__deep", arguments: nestedArguments(400) } },
    { textFromLastToolResult: true, prefix: "model saw: " },
  ]);
  expect(run.code, run.stderr).toBe(0);
  expect(run.requests[0]?.toolNames).toContain("mcp__deep__deep");
  expect(run.stdout).toContain("model saw: deep called");
}, 120_000);

it("leaves out a schema nested 1,000 levels deep (2,000 JSON levels, past what Pi's per-request clone can copy): Pi keeps answering, the sibling tool works", async () => {
  await home.writeSettings({ mcp: { servers: { deep: deepServer(1_000) } } });
  const run = await runPiWithMcp(home, "go", [
    { toolCall: { name: "mcp__deep__echo", arguments: { text: "still answering" } } },
    { textFromLastToolResult: true, prefix: "model saw: " },
  ]);
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout).toContain("model saw: still answering");
  const offered = run.requests.map((request) => request.toolNames ?? []);
  for (const names of offered) expect(names).not.toContain("mcp__deep__deep");
  expect(offered[0]).toContain("mcp__deep__echo");
}, 120_000);
