// The context budget's estimate is one figure wherever it is shown (README, "The context budget"):
// a real Pi 1.6 (faux model) records the catalogs and says it in `/mcp status`; the built `pi-mcp`
// shows the same in `list` (TOKENS column, `definitionTokens`) and `get` (tokens line,
// `definitionTokens`) from the recorded catalogs without connecting, and in `test` (text and
// `test --json` `definitionTokens`, connected); the TUI footer shows the declared total. The
// expected figure is computed here from the tools the fixture servers list, by the documented
// rule (UTF-8 bytes of {"name":"mcp__<server>__<tool>","description","inputSchema"} / 4, rounded
// up, per tool; a server's is the sum), not by pi-mcp's own code.
import { readFileSync, writeFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fixturePath } from "../helpers/servers.ts";
import { CLI_BIN, nodeBinary, projectPath, runProcess } from "../helpers/tmp.ts";
import { startPiTui } from "../helpers/tui.ts";
import { FAUX_PROVIDER, NODE, REPO_ROOT, runPi, usePiHome } from "./harness/pi.ts";

const home = usePiHome();

interface FixtureTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Record<string, unknown>;
}

/** Two servers of tools chosen here: multi-byte text in names' descriptions and schemas, so bytes and characters differ. */
const SERVERS: Record<string, FixtureTool[]> = {
  shelf: [
    {
      name: "find_book",
      description: "Sucht Bücher im Regal – „Köln“, naïve café, 日本語の本 ✓",
      inputSchema: {
        type: "object",
        properties: { query: { type: "string", description: "Suchbegriff (z. B. Größe)" }, limit: { type: "integer", minimum: 1 } },
        required: ["query"],
      },
    },
    { name: "shelve", description: "Puts a book back.", inputSchema: { type: "object", properties: { id: { type: "string" } } } },
    { name: "count", description: "", inputSchema: { type: "object" } },
  ],
  clock: [
    {
      name: "now",
      description: `The time now, in a zone such as Europe/Zürich. ${"Details. ".repeat(30)}`,
      inputSchema: { type: "object", properties: { zone: { type: "string", enum: ["UTC", "Europe/Zürich", "Asia/東京"] } } },
    },
  ],
};

/** The documented estimate, computed independently of src/runtime/context-budget.ts. */
function expectedTokens(server: string): number {
  let total = 0;
  for (const tool of SERVERS[server]!) {
    const json = JSON.stringify({ name: `mcp__${server}__${tool.name}`, description: tool.description, inputSchema: tool.inputSchema });
    total += Math.ceil(new TextEncoder().encode(json).length / 4);
  }
  return total;
}

const events = () => join(home.home, "server-events.jsonl");
const starts = () => {
  try {
    return readFileSync(events(), "utf8")
      .split("\n")
      .filter((line) => line.includes('"event":"start"')).length;
  } catch {
    return 0;
  }
};

async function configure(): Promise<void> {
  const servers: Record<string, unknown> = {};
  for (const [name, tools] of Object.entries(SERVERS)) {
    const file = join(home.home, `${name}-tools.json`);
    await writeFile(file, JSON.stringify({ label: name, tools }));
    servers[name] = { command: NODE, args: [fixturePath("catalog")], environment: { FIXTURE_TOOLS_FILE: file, FIXTURE_EVENTS: events() } };
  }
  await home.writeSettings({ mcp: { connectTimeoutMs: 60_000, firstRequestWaitMs: 30_000, servers } });
}

function piMcp(args: readonly string[]) {
  return runProcess(nodeBinary(), [CLI_BIN, ...args], {
    cwd: home.cwd,
    env: { PATH: projectPath(), HOME: home.home, PI_CODING_AGENT_DIR: home.agentDir },
    timeoutMs: 60_000,
  });
}

const en = (tokens: number) => tokens.toLocaleString("en-US");

describe("the definition-token estimate", () => {
  it("is the same in /mcp status, list, get (recorded catalog, no connection) and test (connected), and is the documented rule", async () => {
    await configure();
    const shelf = expectedTokens("shelf");
    const clock = expectedTokens("clock");
    // The figures differ from a per-character count: the multi-byte text is counted in bytes.
    expect(shelf).not.toBe(Math.ceil(JSON.stringify({ name: "mcp__shelf__find_book", ...SERVERS.shelf![0] }).length / 4));

    // Before any Pi session: nothing recorded, so list and get know no figure.
    const before = JSON.parse((await piMcp(["list", "--json"])).stdout) as { servers: { name: string; definitionTokens: number | null }[] };
    expect(before.servers.map((server) => [server.name, server.definitionTokens]).sort()).toEqual([
      ["clock", null],
      ["shelf", null],
    ]);

    // A real Pi connects them, records their catalogs and shows the estimate in /mcp status.
    const pi = await runPi({
      home: home.home,
      cwd: home.cwd,
      extensions: [REPO_ROOT],
      args: ["-p", "/mcp wait", "/mcp status", "go"],
      script: [{ text: "ok" }],
      timeoutMs: 90_000,
    });
    expect(pi.code, pi.stderr).toBe(0);
    const block = (name: string) =>
      pi.stdout
        .slice(pi.stdout.indexOf(`${name}: connected`))
        .split("\n")
        .slice(0, 12)
        .join("\n");
    expect(block("shelf")).toMatch(new RegExp(`^ {2}context: auto: direct, ${en(shelf)} tokens, budget 12,800 of 128,000$`, "m"));
    expect(block("clock")).toMatch(new RegExp(`^ {2}context: auto: direct, ${en(clock)} tokens, budget 12,800 of 128,000$`, "m"));
    expect(pi.stdout).toMatch(
      new RegExp(`^MCP tools: ≈${en(shelf + clock)} tokens declared per request, ≈${en(shelf + clock)} in all$`, "m"),
    );
    const startsAfterPi = starts();
    expect(startsAfterPi).toBeGreaterThanOrEqual(2);

    // list and get: the same figures, from the recorded catalogs, without starting a server.
    const list = await piMcp(["list"]);
    expect(list.code, list.stderr).toBe(0);
    const lines = list.stdout.split("\n");
    const header = lines.find((line) => line.startsWith("NAME "))!;
    const column = header.indexOf("TOKENS");
    expect(column).toBeGreaterThan(0);
    const cell = (name: string) => (lines.find((line) => line.startsWith(`${name} `)) ?? "").slice(column).split(/\s+/)[0];
    expect(cell("shelf")).toBe(`≈${en(shelf)}`);
    expect(cell("clock")).toBe(`≈${en(clock)}`);
    const listJson = JSON.parse((await piMcp(["list", "--json"])).stdout) as {
      servers: { name: string; definitionTokens: number | null }[];
    };
    expect(Object.fromEntries(listJson.servers.map((server) => [server.name, server.definitionTokens]))).toEqual({ shelf, clock });

    for (const [name, tokens] of [
      ["shelf", shelf],
      ["clock", clock],
    ] as const) {
      const get = await piMcp(["get", name]);
      expect(get.code, get.stderr).toBe(0);
      expect(get.stdout).toMatch(new RegExp(`^\\s*tokens:\\s+≈${en(tokens)} of tool definitions \\(last recorded catalog\\)$`, "m"));
      const getJson = JSON.parse((await piMcp(["get", name, "--json"])).stdout) as { definitionTokens: number | null };
      expect(getJson.definitionTokens).toBe(tokens);
    }
    expect(starts()).toBe(startsAfterPi);

    // test connects: its text and its --json carry the same figure.
    const tested = await piMcp(["test", "shelf"]);
    expect(tested.code, tested.stderr).toBe(0);
    expect(tested.stdout).toMatch(new RegExp(`^✓ shelf: .*, 3 tools, .*≈${en(shelf)} tokens of tool definitions \\(\\d+ ms\\)$`, "m"));
    expect(starts()).toBe(startsAfterPi + 1);
  }, 240_000);

  it("test --json carries definitionTokens per connected server", async () => {
    await configure();
    const result = await piMcp(["test", "--all", "--json"]);
    expect(result.code, result.stderr).toBe(0);
    const document = JSON.parse(result.stdout) as { servers: { name: string; ok: boolean; tools: number; definitionTokens: number }[] };
    const byName = Object.fromEntries(document.servers.map((server) => [server.name, server]));
    expect(byName.shelf).toMatchObject({ ok: true, tools: 3, definitionTokens: expectedTokens("shelf") });
    expect(byName.clock).toMatchObject({ ok: true, tools: 1, definitionTokens: expectedTokens("clock") });
  }, 120_000);

  it("the TUI footer shows the declared total at a glance", async () => {
    await configure();
    const total = expectedTokens("shelf") + expectedTokens("clock");
    // Below 1,000 the footer shows the figure itself (not 1.2k), so the total is checked to the token.
    expect(total).toBeLessThan(1_000);
    const scriptFile = join(home.home, "faux-script.json");
    writeFileSync(scriptFile, JSON.stringify([{ text: "ok" }]));
    const pi = await startPiTui({
      home,
      args: ["-e", REPO_ROOT, "-e", FAUX_PROVIDER, "--provider", "faux", "--model", "faux-1"],
      env: { PI_MCP_FAUX_SCRIPT: scriptFile },
      columns: 120,
    });
    try {
      // The screen is read again until the footer says it (a terminal announces nothing); a wrong figure times out with the screen.
      const shown = await pi.waitFor(`the footer "MCP 2/2 · ≈${total} tok"`, (text) => text.includes(`MCP 2/2 · ≈${total} tok`), {
        timeoutMs: 60_000,
      });
      expect(shown.match(/≈\d+ tok/g)).toEqual([`≈${total} tok`]);
    } finally {
      await pi.stop();
    }
  }, 120_000);
});
