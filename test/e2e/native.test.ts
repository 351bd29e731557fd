/**
 * pi-mcp inside a real Pi 1.6 (offline faux model): `/mcp get` shows a
 * definition with its live connection, `/mcp help <command>` one command's
 * help, and `pi-mcp setup` moves Pi's built-in MCP servers over and turns the
 * built-in off, so Pi stops warning at start that /mcp replaced it.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fixtureCommand } from "../helpers/servers.ts";
import { CLI_BIN, nodeBinary, projectPath, runProcess } from "../helpers/tmp.ts";
import { mcpInRpc, REPO_ROOT, runPi, startPiRpc, usePiHome } from "./harness/pi.ts";

const home = usePiHome();
/** What Pi 1.6 prints at every start while its built-in MCP extension is on and pi-mcp registers /mcp. */
const REPLACED_WARNING = "built-in extension `mcp` was not loaded";

describe("/mcp get and /mcp help in a live session", () => {
  it("/mcp get shows the definition and its live connection; /mcp help get shows its usage and examples, without the CLI's --json", async () => {
    const basic = fixtureCommand("basic");
    await home.writeSettings({
      mcp: { servers: { basic: { command: basic.command, args: basic.args, environment: { TOKEN: "${PI_MCP_GET_TOKEN}" } } } },
    });
    const rpc = await startPiRpc({
      home: home.home,
      cwd: home.cwd,
      extensions: [REPO_ROOT],
      env: { PI_MCP_GET_TOKEN: "resolved-get-token" },
    });
    try {
      expect(await mcpInRpc(rpc, "wait")).toContain("basic: connected");
      const shown = await mcpInRpc(rpc, "get basic");
      expect(shown).toMatch(/^basic\n {2}scope:\s+global \(/);
      // Long values wrap at 80 columns, continuing under themselves.
      expect(shown.replace(/\n {15}/g, " ")).toContain(`  command:     ${basic.command} ${basic.args.join(" ")}`);
      expect(shown).toContain("  environment: TOKEN=${PI_MCP_GET_TOKEN}");
      expect(shown).toMatch(/^ {2}status:\s+connected, 3 tools, protocol \S+$/m);
      expect(shown).not.toContain("resolved-get-token");

      const help = await mcpInRpc(rpc, "help get");
      expect(help).toMatch(/^\/mcp get: Show one server definition/);
      expect(help).toContain("Usage:\n  /mcp get <server>\n");
      expect(help).toMatch(/^Examples:\n {2}\/mcp get docs\n/m);
      expect(help).not.toContain("--json");
      expect(await mcpInRpc(rpc, "help")).toContain("/mcp get <server>");
    } finally {
      await rpc.close();
    }
  });
});

describe("pi-mcp setup", () => {
  it("after setup Pi no longer warns that /mcp replaced its built-in MCP, and the server Pi's mcp.json named is connected by pi-mcp", async () => {
    const basic = fixtureCommand("basic");
    await writeFile(
      join(home.agentDir, "mcp.json"),
      JSON.stringify({ mcpServers: { basic: { command: basic.command, args: basic.args } } }),
    );
    await home.writeSettings({ theme: "dark", extensions: [] });
    const pi = () => runPi({ home: home.home, cwd: home.cwd, extensions: [REPO_ROOT], args: ["-p", "/mcp wait"], timeoutMs: 90_000 });

    const before = await pi();
    expect(before.code, before.stderr).toBe(0);
    expect(before.stderr).toContain(REPLACED_WARNING);
    expect(before.stdout).toContain("No MCP servers are configured.");

    // In Pi, a dry run changes nothing.
    const dry = await runPi({
      home: home.home,
      cwd: home.cwd,
      extensions: [REPO_ROOT],
      args: ["-p", "/mcp setup --dry-run"],
      timeoutMs: 90_000,
    });
    expect(dry.stdout).toContain('would be turned off: "-builtin:mcp" would be added to extensions');
    expect(JSON.parse(await readFile(join(home.agentDir, "settings.json"), "utf8"))).toEqual({ theme: "dark", extensions: [] });

    const setup = await runProcess(nodeBinary(), [CLI_BIN, "setup"], {
      cwd: home.cwd,
      env: { PATH: projectPath(), HOME: home.home, PI_CODING_AGENT_DIR: home.agentDir },
      timeoutMs: 60_000,
    });
    expect(setup.code, setup.stderr).toBe(0);
    expect(setup.stdout).toMatch(/✓ basic: fixture-basic/);

    const after = await pi();
    expect(after.code, after.stderr).toBe(0);
    expect(after.stderr).not.toContain(REPLACED_WARNING);
    expect(after.stdout).toMatch(/^basic: connected, 3 tools/m);
  });
});
