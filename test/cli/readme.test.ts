/**
 * The README's example outputs of the built program are what it prints: the
 * settings of "Configure servers" (their variables set), then `pi-mcp list`
 * and `pi-mcp get` as the README shows them (its agent folder
 * `/home/me/.pi/agent` stands for the test's own).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, expect, it } from "vitest";
import { CLI_BIN, REPO_ROOT, buildCli, nodeBinary, runProcess, useSandbox } from "../helpers/tmp.ts";

beforeAll(buildCli, 180_000);

const sandbox = useSandbox();
const README = readFileSync(join(REPO_ROOT, "README.md"), "utf8");

/** The first fenced block of `kind` after `marker`. */
function block(marker: string, kind: string): string {
  const at = README.indexOf(marker);
  expect(at, marker).toBeGreaterThan(-1);
  const start = README.indexOf("```" + kind + "\n", at) + kind.length + 4;
  return README.slice(start, README.indexOf("\n```", start));
}

it("pi-mcp list and pi-mcp get print exactly the README's example for the README's settings", async () => {
  const box = sandbox();
  await box.writeText(box.globalSettings, block("## Configure servers", "json"));
  const example = block("### The `pi-mcp` program", "console");
  const commands = [...example.matchAll(/^\$ pi-mcp (.+)$/gm)].map((match) => match[1]!.split(" "));
  expect(commands).toEqual([["list"], ["get", "remote-docs"]]);
  let printed = "";
  for (const args of commands) {
    const env = box.env({ DOCS_TOKEN: "docs-token-value", WORKSPACE_ID: "workspace-value", MCP_TOKEN: "mcp-token-value" });
    const result = await runProcess(nodeBinary(), [CLI_BIN, ...args], { cwd: box.projectDir, env });
    expect(result.code, result.stderr).toBe(0);
    printed += `$ pi-mcp ${args.join(" ")}\n${result.stdout}`;
  }
  expect(printed.replaceAll(box.agentDir, "/home/me/.pi/agent").trimEnd()).toBe(example);
});
