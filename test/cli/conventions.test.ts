/**
 * The built `pi-mcp` program follows the conventions of the command-line
 * tools it sits beside (gh, npm, claude mcp): --version, help [command],
 * help text that suits pipes and 80-column terminals, exit code 2 for every
 * usage error, one report on stdout for test. Real processes, a temporary
 * agent folder; the TTY cases run under util-linux `script` (a real pty).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLI_BIN, REPO_ROOT, nodeBinary, runProcess, useSandbox, type Sandbox } from "../helpers/tmp.ts";
import { fixtureCommand } from "../helpers/servers.ts";

const sandbox = useSandbox();
const VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { version: string }).version;
/** Every command of the program, as its help lists them. */
const COMMANDS = ["setup", "list", "get", "add", "remove", "enable", "disable", "auth", "logout", "import", "test"];
const ANSI = /\u001b\[/;

function piMcp(box: Sandbox, args: readonly string[], env: Record<string, string> = {}) {
  return runProcess(nodeBinary(), [CLI_BIN, ...args], { cwd: box.projectDir, env: box.env(env) });
}

/** The program under a pseudo-terminal (stdout is a TTY), as a person runs it. */
function onTerminal(box: Sandbox, args: readonly string[], env: Record<string, string> = {}) {
  const line = [nodeBinary(), CLI_BIN, ...args].map((word) => `'${word}'`).join(" ");
  return runProcess("script", ["-qec", line, "/dev/null"], { cwd: box.projectDir, env: box.env({ TERM: "xterm", ...env }) });
}

describe("--version", () => {
  it("--version and -v print the package's version and exit 0", async () => {
    const box = sandbox();
    for (const flag of ["--version", "-v"]) {
      const result = await piMcp(box, [flag]);
      expect(result.code, flag).toBe(0);
      expect(result.stdout).toBe(`${VERSION}\n`);
      expect(result.stderr).toBe("");
    }
  });
});

describe("help", () => {
  it("`help` is --help and `help <command>` is `<command> --help`, exit 0 on stdout", async () => {
    const box = sandbox();
    const [overview, helpFlag] = await Promise.all([piMcp(box, ["help"]), piMcp(box, ["--help"])]);
    expect(overview.code).toBe(0);
    expect(overview.stdout).toBe(helpFlag.stdout);
    for (const command of COMMANDS) expect(overview.stdout).toMatch(new RegExp(`^  ${command}\\s`, "m"));
    for (const command of ["add", "get", "test"]) {
      const [topic, flag, short] = await Promise.all([
        piMcp(box, ["help", command]),
        piMcp(box, [command, "--help"]),
        piMcp(box, [command, "-h"]),
      ]);
      expect(topic.code, command).toBe(0);
      expect(topic.stdout).toBe(flag.stdout);
      expect(topic.stdout).toBe(short.stdout);
      expect(topic.stdout).toMatch(new RegExp(`^pi-mcp ${command}: `));
    }
  });

  it("--help before a command is that command's help (as gh takes it); `help help` is the overview", async () => {
    const box = sandbox();
    const [before, after, helpHelp, overview] = await Promise.all([
      piMcp(box, ["--help", "add"]),
      piMcp(box, ["add", "--help"]),
      piMcp(box, ["help", "help"]),
      piMcp(box, ["--help"]),
    ]);
    expect(before.code, before.stderr).toBe(0);
    expect(before.stdout).toBe(after.stdout);
    expect(helpHelp.code, helpHelp.stderr).toBe(0);
    expect(helpHelp.stdout).toBe(overview.stdout);
  });

  it("help piped into a file has no colours, no trailing spaces and no line over 80 columns", async () => {
    const box = sandbox();
    const outputs = await Promise.all([piMcp(box, ["--help"]), ...COMMANDS.map((command) => piMcp(box, ["help", command]))]);
    for (const { stdout, code } of outputs) {
      expect(code).toBe(0);
      expect(stdout).not.toMatch(ANSI);
      for (const line of stdout.split("\n")) {
        expect(line, JSON.stringify(line)).not.toMatch(/\s$/);
        expect(line.length, line).toBeLessThanOrEqual(80);
      }
    }
  });

  it("every command's help shows required arguments as <name>, optional ones as [name], and two or three examples", async () => {
    const box = sandbox();
    const add = await piMcp(box, ["help", "add"]);
    expect(add.stdout).toMatch(/^Arguments:\n {2}<name>\s+Server name\n {2}\[url\]\s+Remote server URL/m);
    expect(add.stdout).toMatch(/^Usage:\n {2}pi-mcp add \[-l\] <name> <url>/m);
    const test = await piMcp(box, ["help", "test"]);
    expect(test.stdout).toMatch(/^ {2}\[server\]\s/m);
    for (const command of COMMANDS) {
      const { stdout } = await piMcp(box, ["help", command]);
      const examples = stdout.slice(stdout.indexOf("\nExamples:\n"));
      const lines = examples.split("\n").filter((line) => line.startsWith(`  pi-mcp ${command}`));
      expect(lines.length, `${command}:\n${stdout}`).toBeGreaterThanOrEqual(2);
      expect(lines.length, command).toBeLessThanOrEqual(3);
    }
  });

  it("help on a terminal is coloured, unless NO_COLOR is set", async () => {
    const box = sandbox();
    const coloured = await onTerminal(box, ["help", "add"]);
    expect(coloured.code).toBe(0);
    expect(coloured.stdout).toMatch(/\u001b\[1mUsage:\u001b\[22m/);
    const plain = await onTerminal(box, ["help", "add"], { NO_COLOR: "1" });
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain("Usage:");
    expect(plain.stdout).not.toMatch(ANSI);
  });
});

describe("help on standard error", () => {
  it("the overview a missing command prints on stderr has no colour when only stdout is a terminal", async () => {
    const box = sandbox();
    const errors = join(box.root, "errors.txt");
    const line = [nodeBinary(), CLI_BIN].map((word) => `'${word}'`).join(" ");
    const result = await runProcess("script", ["-qec", `${line} 2>'${errors}'`, "/dev/null"], {
      cwd: box.projectDir,
      env: box.env({ TERM: "xterm" }),
    });
    expect(result.code).toBe(2);
    const text = readFileSync(errors, "utf8");
    expect(text).toMatch(/^no command given\n/);
    expect(text).toContain("Usage:");
    expect(text).not.toMatch(ANSI);
  });
});

describe("usage errors exit 2", () => {
  const cases: [string, string[], RegExp][] = [
    ["no command", [], /no command given/],
    ["--version with an argument", ["--version", "list"], /^pi-mcp --version takes no arguments/],
    ["an unknown command", ["frobnicate"], /unknown command "frobnicate"/],
    ["help for an unknown command", ["help", "frobnicate"], /unknown command "frobnicate"/],
    ["an unknown option", ["list", "--frob"], /^list: unknown option --frob/],
    ["an unknown negated option", ["list", "--no-frob"], /^list: unknown option --no-frob/],
    ["an unknown short option", ["list", "-z"], /^list: unknown option -z/],
    ["a missing argument, named as help shows it", ["remove"], /^remove: missing <server>\n/],
    ["an extra argument", ["remove", "a", "b"], /^remove: unexpected argument "b"/],
    ["an option without its value", ["add", "x", "https://e.example/mcp", "--header"], /^add: --header needs a value/],
    ["`--` where no command line is taken", ["list", "--", "x"], /^list: unexpected `--`/],
    ["test with neither a server nor --all", ["test"], /^test: name one <server>, or pass --all/],
    [
      "a command line where add takes a URL (as claude mcp add takes it)",
      ["add", "files", "npx"],
      /^add: "npx" is not a URL; a local server's command line goes after --: add files -- npx/,
    ],
    [
      "a local server's options without -- (as claude mcp add takes them)",
      ["add", "files", "npx", "-y", "pkg"],
      /^add: unknown option -y \(a local server's command line goes after --\)/,
    ],
    ["a value given to a switch (setup would otherwise run for real)", ["setup", "--dry-run=false"], /^setup: --dry-run takes no value/],
    ["a value given to --json", ["list", "--json=0"], /^list: --json takes no value/],
    ["a value given to a negated switch", ["add", "x", "--no-roots=yes", "--", "node"], /^add: --no-roots takes no value/],
  ];
  it.each(cases)("%s", async (_name, args, message) => {
    const box = sandbox();
    const result = await piMcp(box, args);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(message);
    expect(existsSync(box.globalSettings)).toBe(false);
  });

  it("a usage error's usage names the program, fits 80 columns and points to the command's help", async () => {
    const box = sandbox();
    for (const args of [["add", "x"], ["list", "--frob"], ["add", "x", "https://e.example/mcp", "--transport", "ws"], ["remove"]]) {
      const result = await piMcp(box, args);
      expect(result.code, args.join(" ")).toBe(2);
      const lines = result.stderr.trimEnd().split("\n");
      expect(lines[0], args.join(" ")).toMatch(new RegExp(`^${args[0]}: `));
      expect(lines[1]).toBe("Usage:");
      expect(lines[2]).toMatch(new RegExp(`^  pi-mcp ${args[0]} `));
      expect(lines.at(-1)).toBe(`Run pi-mcp help ${args[0]} for its arguments, options and examples.`);
      for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(80);
    }
  });

  it("a value an option does not take exits 2 and offers exactly the values it takes", async () => {
    const box = sandbox();
    const transport = await piMcp(box, ["add", "x", "https://e.example/mcp", "--transport", "ws"]);
    expect(transport.code).toBe(2);
    const problem = transport.stderr.split("\n")[0]!;
    expect(problem).toMatch(/^add: .*--transport.*ws/);
    expect(problem).toMatch(/http/);
    expect(problem).toMatch(/sse/);
    expect(problem).not.toMatch(/stdio/);
    const auth = await piMcp(box, ["add", "x", "https://e.example/mcp", "--auth", "basic"]);
    expect(auth.code).toBe(2);
    expect(auth.stderr.split("\n")[0]).toMatch(/none, bearer, oauth/);
    const exposure = await piMcp(box, ["add", "x", "--exposure", "loud", "--", "node"]);
    expect(exposure.code).toBe(2);
    expect(exposure.stderr.split("\n")[0]).toMatch(/direct, deferred, codemode, hidden/);
    expect(existsSync(box.globalSettings)).toBe(false);
  });
});

describe("test --all", () => {
  it("with no enabled server says so in words (was an empty line); --json is an empty list; exit 0", async () => {
    const box = sandbox();
    await box.writeJson(box.globalSettings, { mcp: { servers: { off: { command: "node", enabled: false } } } });
    const text = await piMcp(box, ["test", "--all"]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toBe("No enabled MCP servers to test (pi-mcp list shows the configured ones).\n");
    const json = await piMcp(box, ["test", "--all", "--json"]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ servers: [] });
  });

  it("prints one report on stdout with every server, passing and failing, and exits 1 when any failed", async () => {
    const box = sandbox();
    const good = fixtureCommand("basic");
    await box.writeJson(box.globalSettings, {
      mcp: {
        retry: { maxRetries: 0 },
        servers: {
          good: { command: good.command, args: good.args },
          missing: { command: join(box.root, "no-such-program") },
        },
      },
    });
    const result = await runProcess(nodeBinary(), [CLI_BIN, "test", "--all"], { cwd: box.projectDir, env: box.env(), timeoutMs: 60_000 });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe("");
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines.find((line) => line.startsWith("✓ good: "))).toBeDefined();
    expect(lines.find((line) => line.startsWith("✗ missing: "))).toMatch(/no-such-program/);
    const passing = await runProcess(nodeBinary(), [CLI_BIN, "test", "good"], { cwd: box.projectDir, env: box.env(), timeoutMs: 60_000 });
    expect(passing.code).toBe(0);
    expect(passing.stdout).toMatch(/^✓ good: /);
  });
});
