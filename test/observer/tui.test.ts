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
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { toolNameCandidate } from "../../plugins/tool-names/names.ts";
import { FAUX_PROVIDER, makePiHome, NODE, readFauxLog, REPO_ROOT, type PiHome } from "../e2e/harness/pi.ts";
import { startPiTui, type PiTui } from "../helpers/tui.ts";

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
let pi: PiTui;

const count = (text: string, needle: string) => text.split(needle).length - 1;

beforeAll(async () => {
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
  pi = await startPiTui({
    home,
    args: ["-e", REPO_ROOT, "-e", FAUX_PROVIDER, "--provider", "faux", "--model", "faux-1"],
    env: { OBS_SECRET: SECRET, PI_MCP_FAUX_SCRIPT: scriptFile, PI_MCP_FAUX_LOG: faux },
  });
});

afterAll(async () => {
  await pi?.stop();
  await home?.cleanup();
});

it("shows footer health, rows that expand and show progress in place, clean escapes, masked secrets, /mcp status and the HTML export", async () => {
  // Footer: connected/enabled with the terminal failure grouped; one Attention Notice for it.
  await pi.waitFor("the footer ratio", (text) => text.includes("MCP 3/4 · 1 failed"), { timeoutMs: 60_000 });
  await pi.waitFor("the Attention Notice", (text) => text.includes('MCP server "broken" failed'));
  const paneTitle = pi.tmux("display-message", "-p", "-t", "pi", "#{pane_title}"); // Pi's own title

  // A tool row appears (server and original tool name, arguments, state, counts) and expands.
  await pi.submit("please echo");
  let text = await pi.waitFor("the echo row", (shown) => shown.includes("done one"));
  // Startup and a whole turn later (and before any row is expanded, which clears the scrollback): one notice only.
  expect(count(pi.history(), 'MCP server "broken" failed')).toBe(1);
  expect(text).toContain('MCP everything › echo  message="hello observer"');
  expect(text).toMatch(/✓ success · 1 text/);
  expect(text).not.toContain("output (model-visible)");
  pi.keys("C-o");
  text = await pi.waitFor("the expanded row", (shown) => shown.includes("output (model-visible)"));
  expect(text).toContain('"message": "hello observer"');
  expect(text).toContain("Echo: hello observer");
  pi.keys("C-o");
  await pi.waitFor("the collapsed row", (shown) => !shown.includes("output (model-visible)"));

  // Progress replaces the row: one header, one state line, updated in place.
  await pi.submit("run long");
  const seen = new Set<string>();
  const header = "MCP everything › trigger-long-running-operation  duration=2, steps=4";
  await pi.waitFor(
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
  const afterProgress = pi.history();
  expect(count(afterProgress, header)).toBe(1);
  expect(afterProgress).not.toContain("… running");
  expect(afterProgress).not.toMatch(/^\s*progress \d\/4/m);

  // Escape sequences in tool names, results and errors render clean.
  await pi.submit("hostile tools");
  await pi.waitFor("the hostile rows", (shown) => shown.includes("done three"));
  pi.keys("C-o");
  text = await pi.waitFor("the expanded hostile rows", (shown) => shown.includes("red:RED osc: c1:BOLD nel: bs:abcXYZ clear: end"));
  expect(text).toContain("MCP names › escred");
  expect(text).toContain("MCP hostile › fail-loud!");
  expect(text).toContain("✗ failure · bad thing! happened");
  pi.keys("C-o");

  // A secret from settings that a server echoes back is masked on screen.
  await pi.submit("token please");
  text = await pi.waitFor("the token row", (shown) => shown.includes("done four"));
  pi.keys("C-o");
  text = await pi.waitFor("the expanded token row", (shown) => shown.includes("the token is ‹redacted›"));
  pi.keys("C-o");

  // A prompt message renders with its server, prompt name and roles (from its persisted details).
  await pi.submit("/mcp prompt everything args-prompt --arg city=Paris");
  text = await pi.waitFor("the prompt message", (shown) => shown.includes("MCP prompt everything › args-prompt"));
  expect(text).toContain('MCP prompt everything › args-prompt  city="Paris"');
  expect(text).toContain("1 message · roles user");

  // /mcp status: the runtime's report, causes clean and redacted, at 80 columns.
  await pi.submit("/mcp status");
  text = await pi.waitFor("the status report", (shown) => shown.includes("broken: failed"));
  expect(text).toContain("cause: cannot start now! (token ‹redacted›)");
  expect(text).toMatch(/everything: connected, \d+ tools, protocol /);
  expect(text).toMatch(/names: connected, 7 tools/);

  // The HTML export keeps the semantic rows, clean and masked.
  const exported = join(home.home, "export.html");
  await pi.submit(`/export ${exported}`);
  await pi.waitFor("the export", (shown) => shown.includes("Session exported to"));
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
  const all = pi.history();
  expect(all).not.toContain(SECRET);
  expect(all).not.toMatch(/\[31m|\]0;|pwned|owned-title/);
  expect(pi.tmux("display-message", "-p", "-t", "pi", "#{pane_title}")).toBe(paneTitle);
  expect(paneTitle).not.toMatch(/pwned|owned/);

  // The model-visible content stayed faithful: the model got the secret and the raw escapes.
  const requests = readFauxLog(faux);
  const toolResults = requests.flatMap((request) => request.messages).filter((message: any) => message.role === "toolResult");
  const resultText = JSON.stringify(toolResults);
  expect(resultText).toContain(`the token is ${SECRET}`);
  expect(resultText).toContain("\\u001b[31mRED");
}, 120_000);
