// Tool exposure in a real Pi: deferred tools through tool_search, codemode scripts, hidden tools,
// and the fallback on a Pi without exposure.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { usePiHome, NODE, REPO_ROOT, runPi, type FauxStep, type PiVersion } from "./harness/pi.ts";

const EVERYTHING = join(REPO_ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");

const home = usePiHome();

async function run(server: Record<string, unknown>, script: FauxStep[], version: PiVersion = "1.6") {
  await writeFile(
    join(home.agentDir, "settings.json"),
    JSON.stringify({ mcp: { servers: { everything: { command: NODE, args: [EVERYTHING, "stdio"], ...server } } } }),
  );
  return runPi({
    version,
    home: home.home,
    cwd: home.cwd,
    extensions: [REPO_ROOT],
    args: ["-p", "/mcp wait", "go"],
    script,
    timeoutMs: 90_000,
  });
}

it("a deferred tool is not declared, is found through tool_search, and its call returns the MCP result", async () => {
  const result = await run({ exposure: "deferred" }, [
    { toolCall: { name: "tool_search", arguments: { query: "echo" } } },
    { toolCall: { name: "mcp__everything__echo", arguments: { message: "deferred hello" } } },
    { textFromLastToolResult: true },
  ]);
  expect(result.code).toBe(0);
  const first = result.requests[0]!.toolNames;
  expect(first).toContain("tool_search");
  expect(first).not.toContain("mcp__everything__echo");
  expect(result.requests[0]!.systemPrompt).toContain("find and load them with tool_search");
  expect(result.stdout).toContain("Echo: deferred hello");
});

it("a codemode script calls an MCP tool", async () => {
  const result = await run({ exposure: "codemode" }, [
    { toolCall: { name: "codemode", arguments: { code: "return await tools.mcp__everything__echo({ message: 'via script' });" } } },
    { textFromLastToolResult: true },
  ]);
  expect(result.code).toBe(0);
  expect(result.requests[0]!.toolNames).toContain("codemode");
  expect(result.requests[0]!.toolNames).not.toContain("mcp__everything__echo");
  expect(result.stdout).toContain("Echo: via script");
});

it("a hidden tool is unreachable while the server's direct tools work as before", async () => {
  const result = await run({ toolExposure: { echo: "hidden" } }, [
    { toolCall: { name: "mcp__everything__get-sum", arguments: { a: 1, b: 2 } } },
    { toolCall: { name: "mcp__everything__echo", arguments: { message: "should not run" } } },
    { textFromLastToolResult: true },
  ]);
  expect(result.code).toBe(0);
  const first = result.requests[0]!.toolNames;
  expect(first).toContain("mcp__everything__get-sum");
  expect(first).not.toContain("mcp__everything__echo");
  expect(result.requests[1]!.messages.at(-1)).toMatchObject({ role: "toolResult" });
  expect(JSON.stringify(result.requests[1]!.messages.at(-1))).toContain("3");
  expect(result.stdout).not.toContain("Echo: should not run");
});

it("on Pi 0.84, which has no exposure, deferred tools are offered directly after one notice", async () => {
  const result = await run(
    { exposure: "deferred" },
    [{ toolCall: { name: "mcp__everything__echo", arguments: { message: "old pi" } } }, { textFromLastToolResult: true }],
    "0.84",
  );
  expect(result.code).toBe(0);
  expect(result.stderr.match(/does not support tool exposure/g)).toHaveLength(1);
  expect(result.requests[0]!.toolNames).toContain("mcp__everything__echo");
  expect(result.stdout).toContain("Echo: old pi");
});
