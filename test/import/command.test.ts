/**
 * `import` as a command: the validated, locked write (other keys kept, no
 * stray files), --dry-run leaving the disk byte-for-byte as it was, name
 * clashes and --replace, trust, exit codes, the running session told after
 * the write, and no secret value from the environment ever printed.
 */
import { describe, expect, it } from "vitest";
import { commandsFor, runCommandLine, type CommandEnvironment } from "../../src/commands/index.ts";
import { loadConfig } from "../../src/config/load.ts";
import type { ImportDocument } from "../../src/import/types.ts";
import { noKernel, strayAgentFiles, strayFiles, useSandbox, type Sandbox } from "../helpers/tmp.ts";
import { cli, fixture, importJson, placeAll, places, snapshot, trustProject } from "./helpers.ts";

const sandbox = useSandbox();

async function settingsServers(box: Sandbox, file: string): Promise<Record<string, unknown>> {
  const data = (await box.readJson(file)) as { mcp?: { servers?: Record<string, unknown> } };
  return data.mcp?.servers ?? {};
}

describe("writing", () => {
  it("writes each definition to its scope's settings, keeping every other key, through the locked atomic write", async () => {
    const box = sandbox();
    await placeAll(box);
    await trustProject(box);
    await box.writeJson(box.globalSettings, {
      theme: "dark",
      mcp: { requestTimeoutMs: 5000, servers: { mine: { url: "https://mine.example.com/mcp" } } },
    });
    const result = await cli(box, ["import"]);
    expect(result.exitCode).toBe(0);
    expect(result.output).toContain(`Imported:\n  into ${box.globalSettings} (mcp.servers):`);
    const global = (await box.readJson(box.globalSettings)) as Record<string, any>;
    expect(global.theme).toBe("dark");
    expect(global.mcp.requestTimeoutMs).toBe(5000);
    expect(Object.keys(global.mcp.servers)).toEqual([
      "mine",
      "filesystem",
      "docs",
      "sentry",
      "callback",
      "github",
      "legacy",
      "internal-tools",
    ]);
    expect(await settingsServers(box, box.projectSettings)).toEqual({
      "internal-tools": { enabled: false },
      "project-tool": { command: "node", args: ["./tools/mcp.mjs"], cwd: "." },
    });
    expect(await strayAgentFiles(box.agentDir, ["settings.json", "mcp.json", "trust.json"])).toEqual([]);
    // What was written is a configuration pi-mcp accepts (given the variables it names).
    const env = box.env({ FS_TOKEN: "a", LOG_LEVEL: "b", DOCS_TOKEN: "c", SENTRY_SECRET: "d" });
    const config = await loadConfig({ agentDir: box.agentDir, cwd: box.projectDir, projectTrusted: true, env });
    expect(config.issues).toEqual([]);
    expect(config.servers.find((server) => server.name === "internal-tools")).toMatchObject({ masked: true, enabled: false });
  });

  it("--dry-run leaves every file byte-for-byte unchanged and shows what it would write", async () => {
    const box = sandbox();
    await placeAll(box);
    await trustProject(box);
    await box.writeText(box.globalSettings, '{\n  "theme": "light",\n  "mcp": { "servers": {} }\n}\n');
    const before = await snapshot(box.root);
    const text = await cli(box, ["import", "--dry-run"]);
    const json = await importJson(box, ["--dry-run"]);
    for (const from of ["claude", "cursor", "vscode"]) expect((await cli(box, ["import", "--from", from, "--dry-run"])).exitCode).toBe(0);
    expect(await snapshot(box.root)).toEqual(before);
    expect(text.exitCode).toBe(0);
    expect(text.output).toContain("Would import (dry run: nothing was written):");
    expect(text.output).toContain(`"sentry": {\n      "url": "https://mcp.sentry.dev/mcp",`);
    expect(json.document.dryRun).toBe(true);
    // The same import without --dry-run writes exactly what the dry run showed.
    await cli(box, ["import"]);
    const written = await settingsServers(box, box.globalSettings);
    for (const server of json.document.imported.filter((entry) => entry.scope === "global"))
      expect(written[server.name]).toEqual(server.definition);
  });

  it("reports name clashes without overwriting; --replace overwrites; an identical definition is already there", async () => {
    const box = sandbox();
    await box.writeText(places(box).piGlobal, await fixture("pi-global.mcp.json"));
    const mine = { command: "my-own-docs" };
    await box.writeJson(box.globalSettings, {
      mcp: { servers: { docs: mine, legacy: { url: "https://old.example.com/sse", transport: "sse" } } },
    });
    const first = await importJson(box, []);
    expect(first.document.conflicts).toEqual([{ name: "docs", scope: "global", source: places(box).piGlobal }]);
    expect(first.document.skipped.find((server) => server.name === "legacy")?.reasons).toEqual([
      expect.stringMatching(/^already defined the same way in global settings/),
    ]);
    expect((await settingsServers(box, box.globalSettings)).docs).toEqual(mine);
    const text = await cli(box, ["import", "--dry-run"]);
    expect(text.output).toContain(
      `Conflicts (already defined differently; not overwritten, use --replace):\n  "docs" in global settings (${box.globalSettings})`,
    );
    const replaced = await importJson(box, ["--replace"]);
    expect(replaced.document.imported.map((server) => server.name)).toEqual(["docs"]);
    expect((await settingsServers(box, box.globalSettings)).docs).toEqual({
      url: "https://example.com/mcp",
      headers: { Authorization: "Bearer ${DOCS_TOKEN}" },
    });
    const again = await importJson(box, []);
    expect(again.document.imported).toEqual([]);
    expect(again.document.conflicts).toEqual([]);
  });
});

describe("trust and failures", () => {
  it("a project-level file of another host is read only in a trusted project; --approve trusts it for one run", async () => {
    const box = sandbox();
    await box.writeText(places(box).claude, await fixture("claude.mcp.json"));
    const untrusted = await importJson(box, ["--from", "claude"]);
    expect(untrusted.document.sources).toEqual([{ file: places(box).claude, scope: "project", status: "untrusted" }]);
    expect(untrusted.result.output).toContain("not read: the project is not trusted");
    const approved = await importJson(box, ["--from", "claude", "--approve"]);
    expect(approved.document.imported.map((server) => server.name)).toEqual(["airtable", "notion", "asana", "private-api"]);
    expect(Object.keys(await settingsServers(box, box.projectSettings))).toEqual(["airtable", "notion", "asana", "private-api"]);
  });

  it("-l needs saved trust; nothing is written without it", async () => {
    const box = sandbox();
    await box.writeText(places(box).piGlobal, await fixture("pi-global.mcp.json"));
    const result = await cli(box, ["import", "-l"]);
    expect(result.exitCode).toBe(1);
    expect(result.output).toMatch(/^project scope needs saved trust for .*nothing was imported$/);
    expect(await strayFiles(`${box.projectDir}/.pi`, [])).toEqual([]);
  });

  it("exit codes: 2 for usage, 1 for a missing or unreadable source or settings file (naming no content)", async () => {
    const box = sandbox();
    expect((await cli(box, ["import", "--bogus"])).exitCode).toBe(2);
    expect((await cli(box, ["import", "extra"])).exitCode).toBe(2);
    expect((await cli(box, ["import", "--from"])).exitCode).toBe(2);
    const missing = await cli(box, ["import", "--from", "nope.json"]);
    expect(missing).toEqual({ exitCode: 1, output: `${box.projectDir}/nope.json does not exist; nothing was imported` });
    await box.writeText(`${box.root}/broken.json`, '{"mcpServers": {"x": {"env": {"K": "sk-broken-secret"}}');
    const broken = await cli(box, ["import", "--from", `${box.root}/broken.json`]);
    expect(broken).toEqual({ exitCode: 1, output: `${box.root}/broken.json is not valid JSON (with comments); nothing was imported` });
    await box.writeText(`${box.root}/other.json`, '{"servers-list": []}');
    expect((await cli(box, ["import", "--from", `${box.root}/other.json`])).exitCode).toBe(1);
    await box.writeText(places(box).piGlobal, await fixture("pi-global.mcp.json"));
    await box.writeText(box.globalSettings, "{ not json");
    const settings = await cli(box, ["import"]);
    expect(settings).toEqual({ exitCode: 1, output: `${box.globalSettings} is not valid JSON; nothing was imported` });
    expect(await box.readText(box.globalSettings)).toBe("{ not json");
  });

  it("no source files: exit 0 and says so", async () => {
    const box = sandbox();
    const result = await cli(box, ["import"]);
    expect(result.exitCode).toBe(0);
    expect(result.output).toContain("No server definitions found.");
    expect(result.output).toContain(`${places(box).piGlobal} (global): not found`);
  });
});

describe("secrets", () => {
  it("never prints a value from the environment, in text or JSON, even when the definitions reference it", async () => {
    const box = sandbox();
    await placeAll(box);
    await trustProject(box);
    const secrets = {
      FS_TOKEN: "fs-secret-value-1",
      DOCS_TOKEN: "docs-secret-value-2",
      SENTRY_SECRET: "sentry-secret-value-3",
      USERJOT_API_TOKEN: "userjot-secret-value-4",
      PIPES_CLIENT_SECRET: "pipes-secret-value-5",
      AIRTABLE_API_KEY: "airtable-secret-value-6",
      CONTEXT7_KEY: "context7-secret-value-7",
    };
    const outputs: string[] = [];
    for (const from of ["pi", "claude", "cursor", "vscode"]) {
      for (const extra of [["--dry-run"], ["--dry-run", "--json"], []]) {
        const result = await cli(box, ["import", "--from", from, ...extra], secrets);
        expect(result.exitCode).toBe(0);
        outputs.push(result.output, JSON.stringify(result.json ?? null));
      }
    }
    const all = outputs.join("\n");
    for (const value of Object.values(secrets)) expect(all).not.toContain(value);
    // The references themselves are the user's own settings: they are shown and written.
    expect(all).toContain("Bearer ${DOCS_TOKEN}");
  });

  it("shows a literal credential of the source only in --json (what is written); the text marks it", async () => {
    const box = sandbox();
    await box.writeText(
      `${box.root}/desktop.json`,
      JSON.stringify({ mcpServers: { api: { url: "https://api.example.com/mcp", headers: { "X-Api-Key": "literal-key-0123" } } } }),
    );
    const text = await cli(box, ["import", "--from", `${box.root}/desktop.json`, "--dry-run"]);
    expect(text.output).not.toContain("literal-key-0123");
    expect(text.output).toContain('"X-Api-Key": "‹literal value, see --json›"');
    const json = await importJson(box, ["--from", `${box.root}/desktop.json`, "--dry-run"]);
    expect(json.document.imported[0]!.definition).toEqual({
      url: "https://api.example.com/mcp",
      headers: { "X-Api-Key": "literal-key-0123" },
    });
  });

  it("names variables that are not set, without values", async () => {
    const box = sandbox();
    await box.writeText(places(box).piGlobal, await fixture("pi-global.mcp.json"));
    const { document } = await importJson(box, ["--dry-run"], { DOCS_TOKEN: "set-value-xyz" });
    expect(document.imported.find((server) => server.name === "docs")!.notes).not.toContainEqual(expect.stringContaining("DOCS_TOKEN"));
    expect(document.imported.find((server) => server.name === "sentry")!.notes).toContain(
      "${SENTRY_SECRET} is not set in this environment: pi-mcp reports its settings invalid until it is",
    );
    // A disabled server is not expanded, so its variables need not be set.
    expect(document.imported.find((server) => server.name === "filesystem")!.notes.join("\n")).not.toContain("not set");
  });
});

describe("/mcp import inside Pi", () => {
  it("persists first, then tells the running session once; --json is CLI-only", async () => {
    const box = sandbox();
    await box.writeText(places(box).piGlobal, await fixture("pi-global.mcp.json"));
    const events: string[] = [];
    const env: CommandEnvironment = {
      surface: "pi",
      agentDir: box.agentDir,
      cwd: box.projectDir,
      env: box.env(),
      projectTrusted: false,
      savedTrust: null,
      credentials: { has: async () => false, remove: async () => false },
      createKernel: noKernel,
      loadConfig: () => loadConfig({ agentDir: box.agentDir, cwd: box.projectDir, projectTrusted: false, env: box.env() }),
      runtime: {
        status: (): never => {
          throw new Error("import never asks for status");
        },
        reconnect: async () => {},
        host: (): never => {
          throw new Error("import never asks for the host");
        },
        settled: async () => true,
        async settingsChanged(server, change) {
          const written = Object.keys(await settingsServers(box, box.globalSettings)).length;
          events.push(`${change} ${server} after ${written} written`);
        },
      },
    };
    const commands = commandsFor("pi");
    expect((await runCommandLine(commands, ["import", "--json"], env)).exitCode).toBe(2);
    const dry = await runCommandLine(commands, ["import", "--dry-run"], env);
    expect(dry.exitCode).toBe(0);
    expect(events).toEqual([]);
    const result = await runCommandLine(commands, ["import"], env);
    expect(result.exitCode).toBe(0);
    expect((result.json as ImportDocument | undefined) ?? null).toBeNull();
    expect(events).toEqual(["connect filesystem after 7 written"]);
  });
});
