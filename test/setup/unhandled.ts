/**
 * Every test file runs with this (vitest `setupFiles`): a test fails when,
 * while it ran, a process it started that runs our code (Pi, the CLI; they
 * preload crash-guard.mjs, see crash-guard-env.ts) had an uncaught exception
 * or an unhandled rejection. In the test process itself vitest reports such
 * errors (a listener of our own would silence it: vitest steps back when the
 * process has another one), and test/setup/unhandled-reporter.ts counts them
 * in the "N passed, N failed" line.
 */
import { existsSync, readFileSync } from "node:fs";
import { afterAll, afterEach, beforeEach } from "vitest";
import { CRASH_LOG } from "./crash-guard-env.ts";

let crashLogBefore = 0;

function crashLog(): string {
  return existsSync(CRASH_LOG) ? readFileSync(CRASH_LOG, "utf8") : "";
}

beforeEach(() => {
  crashLogBefore = crashLog().length;
});

/** The child processes' crashes since the test started (or since the last call), which then no longer fail it: for tests of this guard. */
export function takeChildCrashes(): string[] {
  const log = crashLog();
  const lines = log.slice(crashLogBefore).split("\n").filter(Boolean);
  crashLogBefore = log.length;
  return lines;
}

function check(): void {
  const crashes = takeChildCrashes();
  if (crashes.length > 0)
    throw new Error(`${crashes.length} uncaught error(s) in a process this test started:\n${crashes.join("\n").slice(0, 4000)}`);
}

afterEach(check);
// What happened after the file's last test still fails the file.
afterAll(check);
