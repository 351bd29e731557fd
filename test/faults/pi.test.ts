// The fault suite's one end-to-end run: a real Pi 1.6 (print mode, offline
// faux model) with pi-mcp and several faulty servers beside a healthy one.
// Pi must keep running, the model must get a clear error for each failing
// call, and the healthy server must keep answering.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { makePiHome, NODE, REPO_ROOT, runPi, type PiHome } from "../e2e/harness/pi.ts";

let home: PiHome;
beforeEach(async () => {
  home = await makePiHome();
});
afterEach(async () => {
  await home.cleanup();
});

const fixture = (name: string, environment: Record<string, string> = {}) => ({
  command: NODE,
  args: [join(REPO_ROOT, "test/fixtures/servers", `${name}.mjs`)],
  environment,
});

it("keeps Pi running through a 5,000-level schema, a broken answer, a crashing server and a storm of list changes", async () => {
  const servers = {
    deep: fixture("deep-schema", { FIXTURE_DEPTH: "5000" }),
    hostile: fixture("hostile-rpc"),
    crash: fixture("crash"),
    churn: fixture("list-changed"),
    bystander: fixture("basic"),
  };
  await writeFile(join(home.agentDir, "settings.json"), JSON.stringify({ mcp: { servers } }));
  const run = await runPi({
    home: home.home,
    cwd: home.cwd,
    extensions: [REPO_ROOT],
    args: ["-p", "/mcp wait", "go"],
    script: [
      { toolCall: { name: "mcp__hostile__bad-content", arguments: {} } },
      { toolCall: { name: "mcp__crash__crash", arguments: {} } },
      { toolCall: { name: "mcp__churn__churn", arguments: { count: 2000 } } },
      { toolCall: { name: "mcp__bystander__echo", arguments: { text: "alive" } } },
      { textFromLastToolResult: true, prefix: "model saw: " },
    ],
    timeoutMs: 60_000,
  });
  expect(run.timedOut).toBe(false);
  expect(run.code).toBe(0);
  expect(run.stdout).toContain("model saw: alive");
  const offered = run.requests[0]?.toolNames ?? [];
  expect(offered).toContain("mcp__deep__echo");
  expect(offered).not.toContain("mcp__deep__deep");
  expect(offered).toContain("mcp__bystander__echo");
  // What the model got back for each call, in order.
  const results = run.requests.at(-1)!.messages.filter((message: { role: string }) => message.role === "toolResult");
  const text = (result: { content: { type: string; text?: string }[] }) => result.content.map((item) => item.text ?? "").join("\n");
  expect(results.map((result: { isError: boolean }) => result.isError)).toEqual([true, true, false, false]);
  expect(text(results[0])).toContain("hostile/bad-content: the server answered with an invalid result (content is not a list)");
  expect(text(results[1])).toContain("crash/crash failed: the server's connection was lost during the call");
  expect(text(results[2])).toBe("churned 2000");
  expect(text(results[3])).toBe("alive");
}, 90_000);
