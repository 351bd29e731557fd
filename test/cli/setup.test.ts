/**
 * `pi-mcp setup`: the servers of Pi's built-in MCP (mcp.json) move into
 * pi-mcp's settings by `import --from pi`'s rules, Pi's built-in MCP extension
 * is turned off in the global settings ("-builtin:mcp" in `extensions`, every
 * other entry and key kept, under the settings lock, replaced atomically), the
 * imported servers are tested, and the report says what was done. The built
 * binary, real fixture servers, and one in-process run to watch the lock.
 */
import { closeSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fixtureCommand } from "../helpers/servers.ts";
import { CLI_BIN, nodeBinary, runCli, runProcess, runWhileLocked, useSandbox, type Sandbox } from "../helpers/tmp.ts";

const sandbox = useSandbox();

function piMcp(box: Sandbox, args: readonly string[]) {
  return runProcess(nodeBinary(), [CLI_BIN, ...args], { cwd: box.projectDir, env: box.env(), timeoutMs: 60_000 });
}

/** Pi's own mcp.json (its built-in MCP's format) with a working server and one pi-mcp cannot express. */
async function builtinServers(box: Sandbox): Promise<{ command: string; args: string[] }> {
  const basic = fixtureCommand("basic");
  await box.writeJson(join(box.agentDir, "mcp.json"), {
    mcpServers: {
      basic: { command: basic.command, args: basic.args },
      gh: { command: "gh-mcp", env: { GH_TOKEN: "!gh auth token" } },
    },
  });
  return { command: basic.command, args: basic.args };
}

const OTHER_SETTINGS = {
  theme: "dark",
  extensions: ["./extensions/mine.ts", "+builtin:codemode", "!legacy/*.ts"],
  packages: ["npm:some-package"],
};

describe("setup", () => {
  it("imports Pi's built-in servers, adds -builtin:mcp keeping every other extensions entry and key, tests them, and says so", async () => {
    const box = sandbox();
    const basic = await builtinServers(box);
    await box.writeJson(box.globalSettings, OTHER_SETTINGS);
    const original = await box.readText(box.globalSettings);
    // Held open across the run: a file replaced by a rename keeps its old content under this descriptor.
    const held = openSync(box.globalSettings, "r");
    const result = await piMcp(box, ["setup"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe("");
    expect(await box.readJson(box.globalSettings)).toEqual({
      ...OTHER_SETTINGS,
      extensions: [...OTHER_SETTINGS.extensions, "-builtin:mcp"],
      mcp: { servers: { basic: { command: basic.command, args: basic.args } } },
    });
    // Replaced whole by a rename, never rewritten in place.
    try {
      expect(readFileSync(held, "utf8")).toBe(original);
    } finally {
      closeSync(held);
    }
    expect(result.stdout).toContain("Servers of Pi's built-in MCP (mcp.json):");
    expect(result.stdout).toMatch(/Imported:\n\s+into .*settings\.json \(mcp\.servers\):\n\s+"basic":/);
    expect(result.stdout).toMatch(/Skipped \(not imported\):\n\s+"gh" from .*mcp\.json\n\s+env\.GH_TOKEN: /);
    expect(result.stdout).toContain(`turned off: added "-builtin:mcp" to extensions in ${box.globalSettings}`);
    expect(result.stdout).toMatch(/Test of the imported servers:\n {2}✓ basic: fixture-basic \S+, protocol \S+, 3 tools/);

    // Again: nothing new to import or test, and the entry is not added twice.
    const again = await piMcp(box, ["setup", "--json"]);
    expect(again.code).toBe(0);
    const document = JSON.parse(again.stdout);
    expect(document).toMatchObject({ dryRun: false, builtin: { file: box.globalSettings, change: "present" }, tested: [] });
    expect(document.import.imported).toEqual([]);
    expect(document.import.skipped.map((server: { name: string }) => server.name).sort()).toEqual(["basic", "gh"]);
    expect(
      ((await box.readJson(box.globalSettings)) as { extensions: string[] }).extensions.filter((entry) => entry === "-builtin:mcp"),
    ).toHaveLength(1);
  });

  it("--dry-run --json writes nothing, starts nothing, and reports what would be done", async () => {
    const box = sandbox();
    await builtinServers(box);
    await box.writeJson(box.globalSettings, OTHER_SETTINGS);
    const settings = await box.readText(box.globalSettings);
    const result = await piMcp(box, ["setup", "--dry-run", "--json"]);
    expect(result.code, result.stderr).toBe(0);
    const document = JSON.parse(result.stdout);
    expect(Object.keys(document).sort()).toEqual(["builtin", "dryRun", "import", "tested"]);
    expect(document.dryRun).toBe(true);
    expect(document.builtin).toEqual({ file: box.globalSettings, change: "would-add" });
    expect(document.tested).toEqual([]);
    expect(document.import).toMatchObject({
      dryRun: true,
      imported: [{ name: "basic", scope: "global" }],
      skipped: [{ name: "gh" }],
      conflicts: [],
    });
    expect(await box.readText(box.globalSettings)).toBe(settings);
    const text = await piMcp(box, ["setup", "--dry-run"]);
    expect(text.stdout).toContain('would be turned off: "-builtin:mcp" would be added to extensions');
    expect(text.stdout).toContain("Would import (dry run: nothing was written):");
    expect(await box.readText(box.globalSettings)).toBe(settings);
  });

  it("without Pi's mcp.json or settings it still turns the built-in off; a failing imported server makes it exit 1 with its report on stdout", async () => {
    const box = sandbox();
    const empty = await piMcp(box, ["setup"]);
    expect(empty.code, empty.stderr).toBe(0);
    expect(await box.readJson(box.globalSettings)).toEqual({ extensions: ["-builtin:mcp"] });
    expect(empty.stdout).toContain("none: no enabled server was imported");

    const other = sandbox();
    await other.writeJson(join(other.agentDir, "mcp.json"), { mcpServers: { gone: { command: join(other.root, "no-such-program") } } });
    const failing = await piMcp(other, ["setup"]);
    expect(failing.code).toBe(1);
    expect(failing.stderr).toBe("");
    expect(failing.stdout).toMatch(/✗ gone: .*no-such-program/);
    expect(await other.readJson(other.globalSettings)).toMatchObject({ extensions: ["-builtin:mcp"], mcp: { servers: { gone: {} } } });
  });

  it("an extensions value that is not a list of strings is left alone: exit 1, the file unchanged", async () => {
    const box = sandbox();
    await box.writeJson(box.globalSettings, { extensions: "./mine.ts" });
    const settings = await box.readText(box.globalSettings);
    const result = await piMcp(box, ["setup"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/extensions: must be a list of strings \(is a string\); nothing was changed/);
    expect(await box.readText(box.globalSettings)).toBe(settings);
  });

  it("an extensions value it cannot change stops it before anything is imported: the settings file stays as it was", async () => {
    for (const [extensions, problem] of [
      ["./mine.ts", /extensions: must be a list of strings \(is a string\); nothing was changed/],
      [["./mine.ts", 3], /extensions\[1\]: must be a string \(is a number\); nothing was changed/],
    ] as const) {
      const box = sandbox();
      await builtinServers(box);
      await box.writeJson(box.globalSettings, { theme: "dark", extensions });
      const settings = await box.readText(box.globalSettings);
      for (const args of [["setup"], ["setup", "--json"], ["setup", "--dry-run"]]) {
        const result = await piMcp(box, args);
        expect(result.code, args.join(" ")).toBe(1);
        expect(result.stdout, args.join(" ")).toBe("");
        expect(result.stderr.trimEnd(), args.join(" ")).toMatch(problem);
        expect(await box.readText(box.globalSettings), args.join(" ")).toBe(settings);
      }
    }
  });

  it("an imported server that makes the settings invalid (an unset variable): nothing is tested, the report says why once, and exits 1", async () => {
    const box = sandbox();
    const basic = fixtureCommand("basic");
    await box.writeJson(join(box.agentDir, "mcp.json"), {
      mcpServers: {
        basic: { command: basic.command, args: basic.args },
        other: { command: basic.command, args: basic.args },
        remote: { url: "http://127.0.0.1:1/mcp", headers: { "X-Key": "${PI_MCP_QA_UNSET_KEY}" } },
      },
    });
    const result = await piMcp(box, ["setup"]);
    expect(result.code).toBe(1);
    const report = result.stdout.slice(result.stdout.indexOf("Test of the imported servers:"));
    expect(report).toBe(
      [
        "Test of the imported servers:",
        "  ✗ not tested (basic, other, remote): the settings are invalid:",
        "    mcp.servers.remote.headers.X-Key: environment variable PI_MCP_QA_UNSET_KEY is not set",
        "",
      ].join("\n"),
    );
    // The document keeps one entry per server, as test --json has them.
    await box.writeJson(box.globalSettings, {});
    const json = await piMcp(box, ["setup", "--json"]);
    expect(json.code, json.stdout + json.stderr).toBe(1);
    const tested = (JSON.parse(json.stdout) as { tested: { name: string; ok: boolean; error: string }[] }).tested;
    expect(tested.map((server) => [server.name, server.ok])).toEqual([
      ["basic", false],
      ["other", false],
      ["remote", false],
    ]);
    for (const server of tested)
      expect(server.error).toBe(
        "not tested: the settings are invalid: mcp.servers.remote.headers.X-Key: environment variable PI_MCP_QA_UNSET_KEY is not set",
      );
  });

  it("waits for another holder of the settings lock before it writes extensions", async () => {
    const box = sandbox();
    await box.writeJson(box.globalSettings, { theme: "dark" });
    const result = await runWhileLocked(
      box.globalSettings,
      () => runCli(["setup"], box.projectDir, box.env()),
      async () => expect(await box.readJson(box.globalSettings)).toEqual({ theme: "dark" }),
    );
    expect(result.exitCode).toBe(0);
    expect(await box.readJson(box.globalSettings)).toEqual({ theme: "dark", extensions: ["-builtin:mcp"] });
  });
});
