import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isAlive } from "../helpers/host.ts";
import { callThenRepeat, usePiHome, NODE, REPO_ROOT, runPi, runPiWithMcp, type PiVersion } from "./harness/pi.ts";

const EVERYTHING = join(REPO_ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const SECRET = "e2e-secret-value-7f3a9c";

const home = usePiHome();

const writeSettings = (mcp: unknown) => home.writeSettings({ theme: "dark", mcp });

const everything = { command: NODE, args: [EVERYTHING, "stdio"], environment: { TOKEN: "${E2E_SECRET}" } };

describe.each<PiVersion>(["1.6", "0.84"])("a real Pi %s", (version) => {
  it("prints the configured servers for /mcp list in print mode", async () => {
    await writeSettings({
      servers: { everything, remote: { url: "http://127.0.0.1:9/mcp", enabled: false, auth: { type: "bearer", token: "${E2E_SECRET}" } } },
    });
    const run = await runPi({
      version,
      home: home.home,
      cwd: home.cwd,
      extensions: [REPO_ROOT],
      faux: false,
      args: ["-p", "/mcp list"],
      env: { E2E_SECRET: SECRET },
      timeoutMs: 60_000,
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/everything\s+global\s+enabled\s+stdio\s+none\s+no/);
    expect(run.stdout).toMatch(/remote\s+global\s+disabled\s+http\s+bearer\s+no/);
    expect(run.stdout + run.stderr).not.toContain(SECRET);
  });

  it("keeps running with MCP disabled when the settings are invalid, and says why", async () => {
    await writeSettings({ servers: { broken: { url: "not a url" } } });
    const run = await runPi({
      version,
      home: home.home,
      cwd: home.cwd,
      extensions: [REPO_ROOT],
      args: ["-p", "/mcp status", "hello"],
      script: [{ text: "still alive" }],
      timeoutMs: 60_000,
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("MCP is disabled: the settings are invalid.");
    expect(run.stdout).toContain("mcp.servers.broken.url: must be an absolute http:// or https:// URL");
    expect(run.stdout).toContain("still alive");
  });

  it("lets the model call mcp__everything__echo and gives it the echoed text", async () => {
    await writeSettings({ servers: { everything } });
    const run = await runPiWithMcp(home, "please echo", callThenRepeat("mcp__everything__echo", { message: "round trip" }), {
      version,
      env: { E2E_SECRET: SECRET },
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("everything: connected");
    expect(run.stdout).toContain("model saw: Echo: round trip");
    const offered = run.requests[0]?.toolNames ?? [];
    expect(offered).toContain("mcp__everything__echo");
    expect(offered).toContain("mcp__everything__get-sum");
  });
});

describe("an MCP error result", () => {
  it.each<PiVersion>(["1.6", "0.84"])(
    "reaches the model as a failed tool result on Pi %s (1.x keeps its image and details)",
    async (version) => {
      await writeSettings({ servers: { flaky: { command: NODE, args: [join(REPO_ROOT, "test/fixtures/servers/tool-error.mjs")] } } });
      const run = await runPiWithMcp(home, "try it", callThenRepeat("mcp__flaky__fail", {}), { version });
      expect(run.code).toBe(0);
      expect(run.stdout).toContain("model saw: the quota is exhausted");
      const result = run.requests[1]!.messages.at(-1) as { role: string; isError: boolean; content: Array<{ type: string }> };
      expect(result).toMatchObject({ role: "toolResult", toolName: "mcp__flaky__fail", isError: true });
      expect(result.content.some((item) => item.type === "image")).toBe(version === "1.6");
    },
  );
});

describe("the Instruction Snapshot", () => {
  it("puts a connected server's instructions at the end of the system prompt the model receives", async () => {
    const basic = join(REPO_ROOT, "test/fixtures/servers/basic.mjs");
    await writeSettings({
      servers: { guide: { command: NODE, args: [basic], environment: { FIXTURE_INSTRUCTIONS: "Always greet the guide server." } } },
    });
    const run = await runPiWithMcp(home, "hello", [{ text: "hi" }], { timeoutMs: 60_000 });
    expect(run.code).toBe(0);
    const system = run.requests[0]?.systemPrompt ?? "";
    expect(system).toContain('## MCP server "guide"\n\nAlways greet the guide server.');
    expect(system.trimEnd().endsWith("Always greet the guide server.")).toBe(true);
  });
});

describe("process lifetime", () => {
  it("a session that ends before pi-mcp finished loading exits cleanly (a quick pi -p)", async () => {
    await writeSettings({ servers: { everything } });
    for (const version of ["1.6", "0.84"] as const) {
      const run = await runPi({
        version,
        home: home.home,
        cwd: home.cwd,
        extensions: [REPO_ROOT],
        args: ["-p", "hi"],
        env: { E2E_SECRET: SECRET },
        script: [{ text: "quick answer" }],
        timeoutMs: 30_000,
      });
      expect(run.stderr).not.toMatch(/stale|failed to load/);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain("quick answer");
    }
  });

  it("Pi exits promptly and leaves no server process behind, even when it quits while servers are starting", async () => {
    const startLog = join(home.home, "starts.log");
    const crashFixture = join(REPO_ROOT, "test/fixtures/servers/crash.mjs");
    await writeSettings({ servers: { one: { command: NODE, args: [crashFixture], environment: { FIXTURE_START_LOG: startLog } } } });
    for (let run = 0; run < 3; run++) {
      const result = await runPi({
        home: home.home,
        cwd: home.cwd,
        extensions: [REPO_ROOT],
        faux: false,
        args: ["-p", "/mcp list"],
        timeoutMs: 20_000,
      });
      expect(result.timedOut).toBe(false);
      expect(result.code).toBe(0);
    }
    const pids = (await readFile(startLog, "utf8").catch(() => "")).split("\n").filter(Boolean).map(Number);
    const alive = pids.filter(isAlive);
    expect(alive).toEqual([]);
  });
});

describe("a third-party result mapper", () => {
  it("loaded as its own Pi extension beside pi-mcp, maps the result the model receives", async () => {
    await writeSettings({ servers: { everything } });
    const run = await runPi({
      home: home.home,
      cwd: home.cwd,
      extensions: [REPO_ROOT, join(REPO_ROOT, "test/e2e/fixtures/csv-mapper.ts")],
      args: ["-p", "/mcp wait", "please echo"],
      env: { E2E_SECRET: SECRET },
      script: [{ toolCall: { name: "mcp__everything__echo", arguments: { message: "quiet words" } } }, { textFromLastToolResult: true }],
      timeoutMs: 90_000,
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("THIRD-PARTY MAPPER (everything): ECHO: QUIET WORDS");
  });
});
