/**
 * One grammar for both surfaces: the program (`pi-mcp …`, cli/main.ts) and
 * `/mcp` (runCommandLine on the Pi surface) read a command line by the same
 * rules, drawn from the command's spec, and say the same thing about one that
 * breaks them: only the usage shown after the problem is each surface's own.
 */
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { helpCommand, runCommandLine, type CommandEnvironment, type CommandSpec } from "../../src/commands/index.ts";
import { surfaceCommands } from "../../src/composition.ts";
import { loadConfig } from "../../src/config/load.ts";
import { noKernel, runCli, useSandbox, type Sandbox } from "../helpers/tmp.ts";

const sandbox = useSandbox();

/** A Pi-surface environment: no runtime, nothing stored (every case here is refused before a command runs). */
function piEnvironment(box: Sandbox): CommandEnvironment {
  const env = box.env();
  return {
    surface: "pi",
    agentDir: box.agentDir,
    cwd: box.projectDir,
    env,
    projectTrusted: false,
    savedTrust: null,
    credentials: { has: async () => false, remove: async () => false },
    createKernel: noKernel,
    loadConfig: () => loadConfig({ agentDir: box.agentDir, cwd: box.projectDir, projectTrusted: false, env }),
  };
}

async function inPi(box: Sandbox, argv: readonly string[]) {
  const commands: CommandSpec[] = [...surfaceCommands("pi"), helpCommand(() => commands)];
  return runCommandLine(commands, argv, piEnvironment(box));
}

const URL = "https://e.example/mcp";

/** Command lines both surfaces refuse, and the problem (the first line) both report. */
const REFUSED: [string[], string][] = [
  [["list", "--frob"], "list: unknown option --frob"],
  [["list", "--frob=1"], "list: unknown option --frob"],
  [["list", "--no-frob"], "list: unknown option --no-frob"],
  [["list", "-z"], "list: unknown option -z"],
  [["remove", "-lz", "docs"], "remove: unknown option -z"],
  [["add", "files", "npx", "-y", "pkg"], "add: unknown option -y (a local server's command line goes after --)"],
  [["add", "x", URL, "--header"], "add: --header needs a value"],
  [["add", "x", URL, "--header="], "add: --header needs a value"],
  [
    ["add", "x", URL, "--auth", "bearer", "--token", "--no-roots"],
    "add: --token needs a value (one that starts with - is written --token=<value>)",
  ],
  [["add", "x", "--no-roots=yes", "--", "node"], "add: --no-roots takes no value"],
  [["remove", "--local=false", "docs"], "remove: --local takes no value"],
  [["add", "x", URL, "--transport", "ws"], 'add: --transport takes one of: http, sse (was "ws")'],
  [["add", "x", URL, "--auth=basic"], 'add: --auth takes one of: none, bearer, oauth (was "basic")'],
  [["remove"], "remove: missing <server>"],
  [["remove", "a", "b"], 'remove: unexpected argument "b"'],
  [["remove", "a", "--", "x"], "remove: unexpected `--`"],
  [["add", "x", "--clientId", "c", "--", "node"], "add: unknown option --clientId"],
];

describe("the program and /mcp refuse the same command lines with the same problem", () => {
  it.each(REFUSED)("%j", async (argv, problem) => {
    const box = sandbox();
    const [program, pi] = await Promise.all([runCli(argv, box.projectDir, box.env()), inPi(box, argv)]);
    for (const [surface, result] of [
      ["pi-mcp", program],
      ["/mcp", pi],
    ] as const) {
      expect(result.exitCode, `${surface}: ${result.output}`).toBe(2);
      expect(result.output.split("\n")[0], surface).toBe(problem);
    }
    // Each surface ends with its own usage: the program's as its help shows it, /mcp's on one line.
    expect(program.output).toContain(`\nUsage:\n  pi-mcp ${argv[0]} `);
    expect(pi.output).toMatch(new RegExp(`\\nusage: ${argv[0]}( |$)`));
    expect(existsSync(box.globalSettings)).toBe(false);
  });
});

describe("what both surfaces take", () => {
  it("repeated values in order, with = or a space, a value that starts with - after =, and short options together", async () => {
    const box = sandbox();
    const pi = await inPi(box, ["add", "docs", URL, "--header", "A=1", "--header=B=-2", "--auth=bearer", "--token=-t0ken"]);
    expect(pi.exitCode, pi.output).toBe(0);
    const program = await runCli(
      ["add", "-la", "other", URL, "--header=A=1", "--header", "B=-2", "--auth", "bearer", "--token=-t0ken"],
      box.projectDir,
      box.env(),
    );
    expect(program.exitCode, program.output).toBe(0);
    const servers = async (file: string) => ((await box.readJson(file)) as { mcp: { servers: Record<string, unknown> } }).mcp.servers;
    const expected = { url: URL, headers: { A: "1", B: "-2" }, auth: { type: "bearer", token: "-t0ken" } };
    // -la: --local with --approve (the project is trusted for this run).
    expect([await servers(box.globalSettings), await servers(box.projectSettings)]).toEqual([{ docs: expected }, { other: expected }]);
  });

  it("a value after a space that starts with - but reads as no option of the command is taken as written (an OAuth code may)", async () => {
    const box = sandbox();
    const value = "-29Y5XxDbv-_Q";
    const pi = await inPi(box, ["add", "docs", URL, "--auth", "bearer", "--token", value]);
    expect(pi.exitCode, pi.output).toBe(0);
    const program = await runCli(["add", "other", URL, "--auth", "bearer", "--token", value], box.projectDir, box.env());
    expect(program.exitCode, program.output).toBe(0);
    const servers = ((await box.readJson(box.globalSettings)) as { mcp: { servers: Record<string, unknown> } }).mcp.servers;
    const expected = { url: URL, auth: { type: "bearer", token: value } };
    expect(servers).toEqual({ docs: expected, other: expected });
  });

  it("everything after -- is the local server's command line, as written", async () => {
    const box = sandbox();
    const pi = await inPi(box, ["add", "a", "--env", "K=v", "--", "node", "s.mjs", "--help", "-l", "--", "--frob"]);
    expect(pi.exitCode, pi.output).toBe(0);
    const program = await runCli(
      ["add", "b", "--env", "K=v", "--", "node", "s.mjs", "--help", "-l", "--", "--frob"],
      box.projectDir,
      box.env(),
    );
    expect(program.exitCode, program.output).toBe(0);
    const servers = ((await box.readJson(box.globalSettings)) as { mcp: { servers: Record<string, unknown> } }).mcp.servers;
    const expected = { command: "node", args: ["s.mjs", "--help", "-l", "--", "--frob"], environment: { K: "v" } };
    expect(servers).toEqual({ a: expected, b: expected });
  });
});
