// Secrets a hostile or careless server repeats back: a real Pi (print mode, the
// faux model) with pi-mcp, a `leaky` server that was given a resolved `${NAME}`
// and writes it to stderr, MCP logging and tool errors, and remote servers
// whose resolved header value breaks the request. What Pi prints (`/mcp logs`,
// `/mcp status`) never shows the value or a piece of it: values are matched as
// written and as they look once terminal controls are stripped, before
// anything is stripped or cut.
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { NODE, REPO_ROOT, runPi, usePiHome, type FauxStep } from "../e2e/harness/pi.ts";
import { REDACTED } from "../../src/safety/text.ts";
import { nodeBinary, projectPath, runProcess } from "../helpers/tmp.ts";

const home = usePiHome();
const LEAKY = join(REPO_ROOT, "test/fixtures/servers/leaky.mjs");

/** A fresh secret: distinctive enough that any 8 characters of it identify it. */
function newSecret(label: string): string {
  return `${label}-${randomBytes(12).toString("hex")}`;
}

/** Every piece of `secret` at least `length` characters long: none may appear in what a person is shown. */
function expectNoPieceOf(text: string, secret: string, length = 8): void {
  const core = secret.replace(/[\u0000-\u001f\u007f-\u009f]/g, "");
  for (let start = 0; start + length <= core.length; start++) {
    const piece = core.slice(start, start + length);
    if (text.includes(piece))
      throw new Error(
        `a piece of the secret (${JSON.stringify(piece)}) was shown:\n${text.slice(Math.max(0, text.indexOf(piece) - 200), text.indexOf(piece) + 200)}`,
      );
  }
}

const leak = (args: Record<string, unknown>): FauxStep => ({ toolCall: { name: "mcp__leaky__leak", arguments: args } });

async function runPiWith(servers: Record<string, unknown>, env: Record<string, string>, messages: string[], script: FauxStep[]) {
  await home.writeSettings({ mcp: { retry: { maxRetries: 0 }, servers } });
  return runPi({
    home: home.home,
    cwd: home.cwd,
    extensions: [REPO_ROOT],
    args: ["-p", "/mcp wait", ...messages],
    env,
    script,
    timeoutMs: 90_000,
  });
}

describe("a resolved value that holds terminal controls", () => {
  it("is redacted in /mcp logs and /mcp status in every form a server repeats it (as written, stripped, JSON-escaped, split by an escape)", async () => {
    // A value from a .env edited on Windows (a trailing \r), and a header value with \r\n inside (which the request refuses).
    const envSecret = `${newSecret("sk-live")}\r`;
    const headerSecret = `${newSecret("hdr")}\r\nX-Injected: 1`;
    const run = await runPiWith(
      {
        leaky: { command: NODE, args: [LEAKY], environment: { FIXTURE_SECRET: "${LEAKY_SECRET}" } },
        remote: { url: "http://127.0.0.1:9/mcp", headers: { "X-Key": "${HEADER_SECRET}" }, auth: { type: "none" } },
      },
      { LEAKY_SECRET: envSecret, HEADER_SECRET: headerSecret },
      ["go", "/mcp logs", "/mcp status"],
      [
        {
          toolCalls: ["raw", "stripped", "json", "split"].map((form) => ({ name: "mcp__leaky__leak", arguments: { where: "log", form } })),
        },
        { text: "done" },
      ],
    );
    expect(run.code, run.stderr).toBe(0);
    const shown = `${run.stdout}\n${run.stderr}`;
    // The logs were shown (four MCP log lines), each with the value replaced.
    expect(run.stdout.match(/\[warning\] leaky: ‹redacted›/g)).toHaveLength(4);
    expect(run.stdout).toMatch(/remote: failed/);
    expect(run.stdout).toContain(`cause: `);
    expect(run.stdout).toContain(REDACTED);
    expectNoPieceOf(shown, envSecret);
    expectNoPieceOf(shown, headerSecret.split("\r")[0]!);
  }, 120_000);
});

describe("/mcp logs cuts only after it redacted", () => {
  // Secrets with a line break (a value from a .env with \n in it): a cut at a line boundary cannot drop them whole.
  // MCP log messages arrive in order before the call's result, so the log is complete when /mcp logs runs.
  it("shows no piece of a secret that its 50 KB cut or its 2,000-line cut runs through", async () => {
    const byteSecret = `${newSecret("bytes-one")}\n${newSecret("bytes-two")}`;
    const lineSecret = `${newSecret("lines-one")}\n${newSecret("lines-two")}`;
    const second = byteSecret.split("\n")[1]!;
    const run = await runPiWith(
      {
        leaky: { command: NODE, args: [LEAKY], environment: { FIXTURE_SECRET: "${ONE}" } },
        lines: { command: NODE, args: [LEAKY], environment: { FIXTURE_SECRET: "${TWO}" } },
      },
      { ONE: byteSecret, TWO: lineSecret },
      ["go", "/mcp logs leaky", "again", "/mcp logs lines"],
      [
        // The newest 50 KB start 8 characters before the end of the secret's first line.
        leak({ where: "log", form: "raw", before: 80_000, after: 50 * 1024 - 1 - second.length - 1 - 8 }),
        { text: "first done" },
        // Exactly as many lines follow the secret's first line as the 2,000-line cut keeps after it.
        { toolCall: { name: "mcp__lines__leak", arguments: { where: "log", form: "raw", afterLines: 1_998 } } },
        { text: "second done" },
      ],
    );
    expect(run.code, run.stderr).toBe(0);
    const logs = run.stdout.split("[older lines not shown; retained logs:");
    expect(logs).toHaveLength(3); // both were cut
    expect(logs[1]).toContain("zzzz");
    expect(logs[2]).toMatch(/\nz\nz\n/);
    for (const secret of [byteSecret, lineSecret])
      for (const part of secret.split("\n")) expectNoPieceOf(`${run.stdout}\n${run.stderr}`, part);
  }, 120_000);
});

describe("the stderr tail a failure quotes", () => {
  it("never starts with a piece of a secret its 4 KB cut ran through (pi-mcp test, its own process)", async () => {
    const secret = newSecret("tail");
    // One line ending 8 characters into the end of the secret's last 4 KB: the tail is cut inside the secret.
    const leakAndExit = JSON.stringify({ form: "raw", before: 1_000, after: 4096 - 1 - 8 });
    await home.writeSettings({
      mcp: {
        retry: { maxRetries: 0 },
        servers: {
          leaky: { command: NODE, args: [LEAKY], environment: { FIXTURE_SECRET: "${TAIL_SECRET}", FIXTURE_LEAK_AND_EXIT: leakAndExit } },
        },
      },
    });
    const result = await runProcess(
      nodeBinary(),
      ["--experimental-transform-types", "--no-warnings", join(REPO_ROOT, "cli/index.ts"), "test", "leaky", "--json"],
      {
        cwd: home.cwd,
        env: { PATH: projectPath(), HOME: home.home, PI_CODING_AGENT_DIR: home.agentDir, TAIL_SECRET: secret },
        timeoutMs: 60_000,
      },
    );
    expect(result.code).toBe(1);
    const tested = JSON.parse(result.stdout).servers[0];
    expect(tested.ok).toBe(false);
    expect(tested.error).toMatch(/exit(ed)? .*code 3/);
    expectNoPieceOf(`${result.stdout}\n${result.stderr}`, secret);
  }, 90_000);
});
