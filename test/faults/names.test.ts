// Names that are Object.prototype members (`constructor`, `toString`, `valueOf`,
// `hasOwnProperty`, `__proto__`) as server names, tool names, argument names,
// content types and result keys: the pi-mcp CLI (its own process, on real
// settings files) adds, lists, tests, toggles and removes such servers, and a
// real Pi calls their tools, exactly as for any other name.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { NODE, REPO_ROOT, runPiWithMcp, usePiHome } from "../e2e/harness/pi.ts";
import { nodeBinary, projectPath, runProcess } from "../helpers/tmp.ts";

const home = usePiHome();
const FIXTURE = join(REPO_ROOT, "test/fixtures/servers/prototype-names.mjs");
const SERVER_NAMES = ["constructor", "toString", "valueOf", "hasOwnProperty"];

/** The pi-mcp CLI from source as its own process, on the Pi home's settings. */
function cli(...argv: string[]) {
  return runProcess(nodeBinary(), ["--experimental-transform-types", "--no-warnings", join(REPO_ROOT, "cli/index.ts"), ...argv], {
    cwd: home.cwd,
    env: { PATH: projectPath(), HOME: home.home, PI_CODING_AGENT_DIR: home.agentDir },
    timeoutMs: 60_000,
  });
}

const settingsText = () => readFile(join(home.agentDir, "settings.json"), "utf8");

describe("servers named after Object.prototype members", () => {
  it("are added, listed, tested, toggled, logged out, removed and called from Pi like any other; __proto__ is refused as a name and changes nothing", async () => {
    for (const name of SERVER_NAMES) {
      const added = await cli("add", name, "--", NODE, FIXTURE);
      expect(added.code, added.stderr).toBe(0);
      expect(added.stdout).toContain(`Added global server "${name}"`);
    }
    const before = await settingsText();
    const proto = await cli("add", "__proto__", "--", NODE, FIXTURE);
    expect(proto.code).toBe(1);
    expect(proto.stderr).toContain(
      "mcp.servers.__proto__: server name must be 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit",
    );
    expect(await settingsText()).toBe(before);
    expect(Object.keys(JSON.parse(before).mcp.servers)).toEqual(SERVER_NAMES);

    const list = await cli("list", "--json");
    expect(list.code, list.stderr).toBe(0);
    const listed = JSON.parse(list.stdout);
    expect(listed.valid).toBe(true);
    expect(listed.servers.map((server: { name: string }) => server.name)).toEqual([...SERVER_NAMES].sort());
    for (const server of listed.servers)
      expect(server).toMatchObject({ scope: "global", enabled: true, masked: false, transport: "stdio", auth: "none", storedAuth: false });

    const tested = await cli("test", "--all", "--json");
    expect(tested.code, tested.stdout + tested.stderr).toBe(0);
    const servers = JSON.parse(tested.stdout).servers;
    expect(servers.map((server: { name: string; ok: boolean; tools: number }) => [server.name, server.ok, server.tools])).toEqual(
      [...SERVER_NAMES].sort().map((name) => [name, true, 5]),
    );

    expect((await cli("disable", "valueOf")).code).toBe(0);
    expect(JSON.parse(await settingsText()).mcp.servers.valueOf).toMatchObject({ enabled: false });
    expect((await cli("enable", "valueOf")).code).toBe(0);
    expect(JSON.parse(await settingsText()).mcp.servers.valueOf.enabled).toBeUndefined();
    const logout = await cli("logout", "constructor");
    expect(logout.stdout.trim()).toBe('No credentials were stored for "constructor"');
    const removed = await cli("remove", "hasOwnProperty");
    expect(removed.code, removed.stderr).toBe(0);
    expect(Object.keys(JSON.parse(await settingsText()).mcp.servers)).toEqual(["constructor", "toString", "valueOf"]);

    // A real Pi: tools named __proto__ and constructor on servers named constructor and toString, with such argument names.
    const args = { __proto__: { polluted: true }, constructor: "c", toString: "t" };
    const argsJson = '{"__proto__":{"polluted":true},"constructor":"c","toString":"t"}';
    const run = await runPiWithMcp(home, "go", [
      { toolCall: { name: "mcp__constructor____proto__", arguments: JSON.parse(argsJson) as typeof args } },
      { toolCall: { name: "mcp__toString__constructor", arguments: { constructor: "c" } } },
      { textFromLastToolResult: true, prefix: "model saw: " },
    ]);
    expect(run.code, run.stderr).toBe(0);
    const offered = run.requests[0]?.toolNames ?? [];
    for (const tool of ["constructor", "__proto__", "toString", "valueOf", "hasOwnProperty"])
      expect(offered).toContain(`mcp__constructor__${tool}`);
    const results = run.requests.at(-1)!.messages.filter((message: { role: string }) => message.role === "toolResult");
    const texts = results.map((result: { content: { type: string; text?: string }[] }) =>
      result.content.map((item) => item.text ?? "").join("\n"),
    );
    expect(texts[0]).toContain(`called "__proto__" with ${argsJson}`);
    expect(texts[0]).toContain('[unsupported MCP content type "constructor"]');
    expect(texts[0]).toContain('"__proto__": {\n    "polluted": true\n  }');
    expect(texts[1]).toContain('called "constructor" with {"constructor":"c"}');
    expect(run.stdout).toContain('model saw: called "constructor"');
  }, 180_000);

  it("a ${NAME} that names an Object.prototype member is a missing variable, never the member's text", async () => {
    const added = await cli("add", "probe", "--env", "X=${toString}", "--env", "Y=${constructor}", "--", NODE, FIXTURE);
    expect(added.code, added.stderr).toBe(0);
    const listed = JSON.parse((await cli("list", "--json")).stdout);
    expect(listed.valid).toBe(false);
    expect(listed.errors).toEqual([
      { path: "mcp.servers.probe.environment.X", message: "environment variable toString is not set" },
      { path: "mcp.servers.probe.environment.Y", message: "environment variable constructor is not set" },
    ]);
  }, 60_000);
});
