/**
 * Print, JSON and RPC modes get no observer-only output: no footer health
 * and no Attention Notice, even with a server that needs a command. (The TUI
 * shows both: test/observer/tui.test.ts.)
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makePiHome, NODE, REPO_ROOT, runPi, startPiRpc, type PiHome } from "../e2e/harness/pi.ts";

const HOSTILE = join(REPO_ROOT, "test/observer/fixtures/hostile.mjs");
const SECRET = "modes-secret-2468";
/** What only the observer says: the footer ratio and the Attention Notice. */
const OBSERVER_ONLY = [/MCP \d+\/\d+/, /MCP server \\?"broken\\?" failed/, /needs authentication/];

let home: PiHome;
beforeEach(async () => {
  home = await makePiHome();
  const server = (environment: Record<string, string>) => ({ command: NODE, args: [HOSTILE], environment });
  const mcp = {
    retry: { maxRetries: 0 },
    servers: { hostile: server({ TOKEN: "${MODES_SECRET}" }), broken: server({ TOKEN: "${MODES_SECRET}", FIXTURE_FAIL_INIT: "1" }) },
  };
  await writeFile(join(home.agentDir, "settings.json"), JSON.stringify({ theme: "dark", mcp }));
});
afterEach(async () => {
  await home.cleanup();
});

const script = [{ toolCall: { name: "mcp__hostile__echo-token" } }, { text: "all done" }];
const env = { MODES_SECRET: SECRET };

describe("modes without a TUI", () => {
  it("print mode: only the command's and the model's output", async () => {
    const run = await runPi({
      home: home.home,
      cwd: home.cwd,
      extensions: [REPO_ROOT],
      args: ["-p", "/mcp wait", "go"],
      env,
      script,
      timeoutMs: 60_000,
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("broken: failed");
    expect(run.stdout).toContain("all done");
    for (const pattern of OBSERVER_ONLY) expect(run.stdout + run.stderr).not.toMatch(pattern);
    // The model saw the server's answer as it was.
    expect(JSON.stringify(run.requests.at(-1)?.messages)).toContain(`the token is ${SECRET}`);
  });

  it("JSON mode: the event stream carries no observer output", async () => {
    const run = await runPi({
      home: home.home,
      cwd: home.cwd,
      extensions: [REPO_ROOT],
      args: ["--mode", "json", "/mcp wait", "go"],
      env,
      script,
      timeoutMs: 60_000,
    });
    expect(run.stdout).toContain("all done");
    for (const pattern of OBSERVER_ONLY) expect(run.stdout).not.toMatch(pattern);
  });

  it("RPC mode: no footer status and no Attention Notice reach the client", async () => {
    const rpc = await startPiRpc({ home: home.home, cwd: home.cwd, extensions: [REPO_ROOT], env, script });
    try {
      await rpc.prompt("/mcp wait", { settle: false, timeoutMs: 30_000 });
      await rpc.prompt("go", { timeoutMs: 30_000 });
      const records = JSON.stringify(rpc.records);
      expect(records).toContain("all done");
      expect(
        rpc.records.filter(
          (record) => record.type === "extension_ui_request" && record.method === "setStatus" && record.statusKey === "pi-mcp",
        ),
      ).toEqual([]);
      for (const pattern of OBSERVER_ONLY.slice(1)) expect(records).not.toMatch(pattern);
    } finally {
      await rpc.close();
    }
  });
});
