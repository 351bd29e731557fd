/**
 * The MCP Observer UI in a real Pi 1.6 TUI, driven through tmux at 80 columns
 * with the offline faux model: server-everything, the escape-laden `names`
 * fixture, the `hostile` fixture (escapes in names, results and errors, and a
 * settings secret echoed back) and a server that fails to start.
 *
 * Shown: the footer ratio, one Attention Notice for the failed server, a tool
 * row that appears and expands, progress replacing the row in place, clean
 * rows for escape sequences (no raw sequence on screen, the pane title never
 * changes), a masked secret (still in the model-visible content), a prompt
 * message, `/mcp status` and the HTML export (`/export`).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { toolNameCandidate } from "../../src/runtime/tool-names.ts";
import { FAUX_PROVIDER, makePiHome, NODE, piCli, readFauxLog, REPO_ROOT, killProcessTree, type PiHome } from "../e2e/harness/pi.ts";
import { eventually } from "../helpers/wait.ts";

const HAS_TMUX = spawnSync("tmux", ["-V"]).status === 0;
if (!HAS_TMUX) console.warn("SKIPPED the Pi TUI observer test: tmux is not installed (apt-get install -y tmux)");

const EVERYTHING = join(REPO_ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const NAMES = join(REPO_ROOT, "test/fixtures/servers/names.mjs");
const HOSTILE = join(REPO_ROOT, "test/observer/fixtures/hostile.mjs");
const SECRET = "obs-e2e-secret-5150";
const ESCAPED = "esc\u001b[31mred\u001b[0m";
const evil = (text: string) => `\u001b[31m${text}\u001b[0m\u001b]0;pwned-title\u0007\u009b1m!\u009b0m`;
const FAIL_TOOL = `fail${evil("-loud")}`;
/** Terminal controls other than the newline (what a captured screen must never hold). */
const CONTROLS = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

let home: PiHome;
let faux: string;
let pid: number | undefined;

/** tmux on a server of our own, whose socket lives (and goes) with the temporary home. */
const tmux = (...args: string[]): string => execFileSync("tmux", ["-S", join(home.home, "tmux.sock"), ...args], { encoding: "utf8" });
/** The visible screen. */
const screen = (): string => tmux("capture-pane", "-p", "-t", "obs");
/** Everything Pi printed, scrollback included. */
const history = (): string => tmux("capture-pane", "-p", "-S", "-", "-t", "obs");
/** The screen (or history) once `check` holds for it: a terminal announces nothing, so it is read again. */
async function waitFor(what: string, check: (text: string) => boolean, { timeoutMs = 30_000, read = screen } = {}): Promise<string> {
  let text = "";
  return eventually(async () => (check((text = read())) ? text : undefined), timeoutMs, () => `waiting for ${what}; screen:\n${text}`);
}

/** The editor and what shows under it (a completion menu): from Pi's second-last separator to the line after the last. */
function editorArea(shown: string): string {
  const lines = shown.split("\n");
  const separators = lines.flatMap((line, index) => (line.startsWith("───") ? [index] : []));
  return lines.slice(separators.at(-2) ?? 0, (separators.at(-1) ?? lines.length) + 2).join("\n");
}

/** Whether the editor (the line above Pi's last separator) holds `text`. */
function editorHolds(shown: string, text: string): boolean {
  const lines = shown.split("\n");
  return lines.some((line, index) => line.trim() === text && lines[index + 1]?.startsWith("───"));
}

/** The editor's state: its area and the cursor (accepting a completion such as `status ` moves it). */
const editorState = (): string => `${tmux("display-message", "-p", "-t", "obs", "#{cursor_x},#{cursor_y}").trim()}\n${editorArea(screen())}`;

/**
 * Types a line and submits it. An Enter that arrives while a (late, asynchronous)
 * completion menu is open only accepts the completion (the line stays, the cursor
 * moves past the added space): once Pi has taken the Enter (the editor's state
 * changed) and the line is still there, one more Enter submits it.
 */
async function submit(text: string): Promise<void> {
  tmux("send-keys", "-t", "obs", "-l", text);
  await waitFor(`"${text}" in the editor`, (shown) => editorHolds(shown, text));
  const typed = editorState();
  tmux("send-keys", "-t", "obs", "Enter");
  await waitFor("Pi to take the Enter", () => editorState() !== typed);
  if (editorHolds(screen(), text)) tmux("send-keys", "-t", "obs", "Enter");
  await waitFor(`"${text}" to be submitted`, (shown) => !editorHolds(shown, text));
}

const count = (text: string, needle: string) => text.split(needle).length - 1;

beforeAll(async () => {
  if (!HAS_TMUX) return;
  home = await makePiHome();
  const server = (script: string, environment: Record<string, string> = {}) => ({ command: NODE, args: [script], environment });
  const settings = {
    theme: "dark",
    mcp: {
      retry: { maxRetries: 0 },
      servers: {
        everything: { command: NODE, args: [EVERYTHING, "stdio"] },
        names: server(NAMES),
        hostile: server(HOSTILE, { TOKEN: "${OBS_SECRET}" }),
        broken: server(HOSTILE, { TOKEN: "${OBS_SECRET}", FIXTURE_FAIL_INIT: "1" }),
      },
    },
  };
  writeFileSync(join(home.agentDir, "settings.json"), JSON.stringify(settings, null, 2));
  const script = [
    { toolCall: { name: "mcp__everything__echo", arguments: { message: "hello observer" } } },
    { text: "done one" },
    { toolCall: { name: "mcp__everything__trigger-long-running-operation", arguments: { duration: 2, steps: 4 } } },
    { text: "done two" },
    { toolCalls: [{ name: toolNameCandidate(`mcp__names__${ESCAPED}`) }, { name: toolNameCandidate(`mcp__hostile__${FAIL_TOOL}`) }] },
    { text: "done three" },
    { toolCall: { name: "mcp__hostile__echo-token" } },
    { text: "done four" },
  ];
  const scriptFile = join(home.home, "faux-script.json");
  faux = join(home.home, "faux-log.jsonl");
  writeFileSync(scriptFile, JSON.stringify(script));
  const env: Record<string, string> = {
    HOME: home.home,
    PI_CODING_AGENT_DIR: home.agentDir,
    PI_OFFLINE: "1",
    PI_SKIP_VERSION_CHECK: "1",
    PI_TELEMETRY: "0",
    LANG: "C.UTF-8",
    PATH: `${join(REPO_ROOT, "node_modules/.bin")}:/usr/bin:/bin`,
    OBS_SECRET: SECRET,
    PI_MCP_FAUX_SCRIPT: scriptFile,
    PI_MCP_FAUX_LOG: faux,
  };
  const launcher = join(home.home, "pi.sh");
  const quote = (value: string) => `'${value.replace(/'/g, "'\\''")}'`;
  writeFileSync(
    launcher,
    [
      "#!/bin/sh",
      ...Object.entries(env).map(([key, value]) => `export ${key}=${quote(value)}`),
      `cd ${quote(home.cwd)}`,
      `echo $$ > ${quote(join(home.home, "pi.pid"))}`,
      `exec ${quote(NODE)} ${quote(piCli("1.6"))} -e ${quote(REPO_ROOT)} -e ${quote(FAUX_PROVIDER)} --provider faux --model faux-1 2>${quote(join(home.home, "stderr.log"))}`,
    ].join("\n"),
  );
  chmodSync(launcher, 0o755);
  tmux("new-session", "-d", "-x", "80", "-y", "50", "-s", "obs", launcher);
  tmux("set-option", "-t", "obs", "history-limit", "10000");
  await waitFor("Pi to start", () => {
    try {
      pid = Number(readFileSync(join(home.home, "pi.pid"), "utf8"));
      return pid > 0;
    } catch {
      return false;
    }
  });
});

afterAll(async () => {
  if (!HAS_TMUX) return;
  try {
    tmux("kill-server");
  } catch {
    // already gone
  }
  if (pid) killProcessTree(pid);
  await home?.cleanup();
});

it.skipIf(!HAS_TMUX)(
  "shows footer health, rows that expand and show progress in place, clean escapes, masked secrets, /mcp status and the HTML export",
  async () => {
    // Footer: connected/enabled with the terminal failure grouped; one Attention Notice for it.
    await waitFor("the footer ratio", (text) => text.includes("MCP 3/4 · 1 failed"), { timeoutMs: 60_000 });
    await waitFor("the Attention Notice", (text) => text.includes('MCP server "broken" failed'));
    const paneTitle = tmux("display-message", "-p", "-t", "obs", "#{pane_title}"); // Pi's own title

    // A tool row appears (server and original tool name, arguments, state, counts) and expands.
    await submit("please echo");
    let text = await waitFor("the echo row", (shown) => shown.includes("done one"));
    // Startup and a whole turn later (and before any row is expanded, which clears the scrollback): one notice only.
    expect(count(history(), 'MCP server "broken" failed')).toBe(1);
    expect(text).toContain('MCP everything › echo  message="hello observer"');
    expect(text).toMatch(/✓ success · 1 text/);
    expect(text).not.toContain("output (model-visible)");
    tmux("send-keys", "-t", "obs", "C-o");
    text = await waitFor("the expanded row", (shown) => shown.includes("output (model-visible)"));
    expect(text).toContain('"message": "hello observer"');
    expect(text).toContain("Echo: hello observer");
    tmux("send-keys", "-t", "obs", "C-o");
    await waitFor("the collapsed row", (shown) => !shown.includes("output (model-visible)"));

    // Progress replaces the row: one header, one state line, updated in place.
    await submit("run long");
    const seen = new Set<string>();
    const header = "MCP everything › trigger-long-running-operation  duration=2, steps=4";
    await waitFor(
      "the long operation to finish",
      (shown) => {
        expect(count(shown, header)).toBeLessThanOrEqual(1);
        expect(count(shown, "… running")).toBeLessThanOrEqual(1);
        for (const match of shown.matchAll(/… running · (progress \d\/4 \(\d+%\))/g)) seen.add(match[1]!);
        return shown.includes("done two");
      },
      { timeoutMs: 30_000 },
    );
    expect(seen.size).toBeGreaterThanOrEqual(2);
    const afterProgress = history();
    expect(count(afterProgress, header)).toBe(1);
    expect(afterProgress).not.toContain("… running");
    expect(afterProgress).not.toMatch(/^\s*progress \d\/4/m);

    // Escape sequences in tool names, results and errors render clean.
    await submit("hostile tools");
    await waitFor("the hostile rows", (shown) => shown.includes("done three"));
    tmux("send-keys", "-t", "obs", "C-o");
    text = await waitFor("the expanded hostile rows", (shown) => shown.includes("red:RED osc: c1:BOLD nel: bs:abcXYZ clear: end"));
    expect(text).toContain("MCP names › escred");
    expect(text).toContain("MCP hostile › fail-loud!");
    expect(text).toContain("✗ failure · bad thing! happened");
    tmux("send-keys", "-t", "obs", "C-o");

    // A secret from settings that a server echoes back is masked on screen.
    await submit("token please");
    text = await waitFor("the token row", (shown) => shown.includes("done four"));
    tmux("send-keys", "-t", "obs", "C-o");
    text = await waitFor("the expanded token row", (shown) => shown.includes("the token is ‹redacted›"));
    tmux("send-keys", "-t", "obs", "C-o");

    // A prompt message renders with its server, prompt name and roles (from its persisted details).
    await submit("/mcp prompt everything args-prompt --arg city=Paris");
    text = await waitFor("the prompt message", (shown) => shown.includes("MCP prompt everything › args-prompt"));
    expect(text).toContain('MCP prompt everything › args-prompt  city="Paris"');
    expect(text).toContain("1 message · roles user");

    // /mcp status: the runtime's report, causes clean and redacted, at 80 columns.
    await submit("/mcp status");
    text = await waitFor("the status report", (shown) => shown.includes("broken: failed"));
    expect(text).toContain("cause: cannot start now! (token ‹redacted›)");
    expect(text).toMatch(/everything: connected, \d+ tools, protocol /);
    expect(text).toMatch(/names: connected, 7 tools/);

    // The HTML export keeps the semantic rows, clean and masked.
    const exported = join(home.home, "export.html");
    await submit(`/export ${exported}`);
    await waitFor("the export", (shown) => shown.includes("Session exported to"));
    const html = readFileSync(exported, "utf8");
    const data = JSON.parse(Buffer.from(/id="session-data"[^>]*>([^<]+)</.exec(html)![1]!.trim(), "base64").toString("utf8"));
    const rows = Object.values(data.renderedTools as Record<string, Record<string, string>>).flatMap((row) => Object.values(row));
    const rowsText = rows.join("\n");
    expect(rowsText).toContain("hello observer");
    expect(rowsText).toContain("escred");
    expect(rowsText).toContain("fail-loud!");
    expect(rowsText).toContain("red:RED osc: c1:BOLD nel: bs:abcXYZ clear: end");
    expect(rowsText).toContain("the token is ‹redacted›");
    expect(rowsText).not.toContain(SECRET);
    expect(rowsText).not.toMatch(CONTROLS);

    // Nothing on screen ever carried a control sequence, a title change, or the secret, and nothing was cleared.
    // (Pi clears its scrollback when expanding rows re-renders the transcript, so the history starts late.)
    const all = history();
    expect(all).not.toContain(SECRET);
    expect(all).not.toMatch(/\[31m|\]0;|pwned|owned-title/);
    expect(tmux("display-message", "-p", "-t", "obs", "#{pane_title}")).toBe(paneTitle);
    expect(paneTitle).not.toMatch(/pwned|owned/);

    // The model-visible content stayed faithful: the model got the secret and the raw escapes.
    const requests = readFauxLog(faux);
    const toolResults = requests.flatMap((request) => request.messages).filter((message: any) => message.role === "toolResult");
    const resultText = JSON.stringify(toolResults);
    expect(resultText).toContain(`the token is ${SECRET}`);
    expect(resultText).toContain("\\u001b[31mRED");
  },
  120_000,
);
