/**
 * The README's example outputs of the built program are what it prints: the
 * settings of "Configure servers" (their variables set), then `pi-mcp list`
 * and `pi-mcp get` as the README shows them (its agent folder
 * `/home/me/.pi/agent` stands for the test's own). Its list of feature
 * plugins ("Switching a feature off") is the table's, FEATURES, with the
 * commands each of them owns.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { internalPlugins } from "../../src/composition.ts";
import { FEATURES } from "../../src/kernel/settings.ts";
import { CLI_BIN, REPO_ROOT, nodeBinary, runProcess, useSandbox } from "../helpers/tmp.ts";

const sandbox = useSandbox();
const README = readFileSync(join(REPO_ROOT, "README.md"), "utf8");

/** The first fenced block of `kind` after `marker`. */
function block(marker: string, kind: string): string {
  const at = README.indexOf(marker);
  expect(at, marker).toBeGreaterThan(-1);
  const fence = "```";
  const start = README.indexOf(`${fence}${kind}\n`, at) + kind.length + 4;
  return README.slice(start, README.indexOf(`\n${fence}`, start));
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

it("lists the feature plugins of the table (FEATURES), in its order, and the /mcp commands each of them owns", () => {
  const section = README.slice(README.indexOf("### Switching a feature off"), README.indexOf("### Global and project settings"));
  const list = /The features are ([^;]+);/.exec(section.replace(/\s+/g, " "))?.[1] ?? "";
  expect([...list.matchAll(/`([^`]+)`/g)].map((match) => match[1])).toEqual([...FEATURES]);
  const named = [...section.replace(/\s+/g, " ").matchAll(/((?:`[a-z]+`\/?)+) for ([a-z]+)\b/g)].map(([, commands, feature]) => [
    feature,
    [...commands!.matchAll(/`([a-z]+)`/g)].map((match) => match[1]),
  ]);
  const owned = internalPlugins()
    .filter((plugin) => (FEATURES as readonly string[]).includes(plugin.name) && (plugin.commands ?? []).length > 0)
    .map((plugin) => [plugin.name, plugin.commands!.map((command) => command.name)]);
  expect(Object.fromEntries(named)).toEqual(Object.fromEntries(owned));
});
