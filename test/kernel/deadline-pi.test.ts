/**
 * A plugin whose `hostStart` tap hangs, in a real Pi 1.6 (print mode, the
 * faux model): after the kernel's 10 s deadline `/mcp status` says which
 * plugin and which hook, no server was started, the turn runs, and Pi exits.
 * (Without the deadline the command never answered: Pi ended mid-command,
 * silently, once nothing else kept its event loop alive.)
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { makePiHome, NODE, REPO_ROOT, runPi, type PiHome } from "../e2e/harness/pi.ts";

const STUCK = join(REPO_ROOT, "test/kernel/fixtures/stuck-start.ts");
const EVERYTHING = join(REPO_ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");

let home: PiHome;
beforeEach(async () => {
  home = await makePiHome();
  const settings = { mcp: { servers: { everything: { command: NODE, args: [EVERYTHING, "stdio"] } } } };
  await writeFile(join(home.agentDir, "settings.json"), JSON.stringify(settings));
});
afterEach(async () => {
  await home.cleanup();
});

it("names the plugin and the hook of a hostStart tap that never finishes, and Pi still exits", { timeout: 90_000 }, async () => {
  const result = await runPi({
    home: home.home,
    cwd: home.cwd,
    extensions: [STUCK, REPO_ROOT],
    args: ["-p", "/mcp status", "hi"],
    script: [{ text: "ok" }],
    timeoutMs: 60_000,
  });
  expect(result.timedOut).toBe(false);
  expect(result.stderr).toContain('plugin "test-stuck-start" failed in hook "hostStart": it did not finish within 10000 ms');
  expect(result.stdout).not.toMatch(/everything: (connected|connecting)/);
  expect(result.stdout).toContain("ok"); // the turn after the command ran as usual
});
