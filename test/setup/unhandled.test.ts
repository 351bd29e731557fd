// The suite's guard against unhandled errors, proven with real processes: a
// child process that runs our code (the CLI, Pi) reports its crash to the
// test that started it, and the "N passed, N failed" line counts what vitest
// saw as failures.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makePiHome, REPO_ROOT, runPi } from "../e2e/harness/pi.ts";
import { nodeBinary, projectPath, runProcess } from "../helpers/tmp.ts";
import { takeChildCrashes } from "./unhandled.ts";

describe("a child process the tests start", () => {
  it("reports an unhandled rejection to the test that started it (which would fail)", async () => {
    const result = await runProcess(nodeBinary(), ["-e", "Promise.reject(new Error('child-guard-probe'))"], {
      cwd: tmpdir(),
      env: { PATH: projectPath() },
    });
    expect(result.code).toBe(1);
    const seen = takeChildCrashes();
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatch(/"origin":"unhandledRejection".*child-guard-probe/);
  });

  it("reports it from a real Pi too: an extension's rejected background work ends Pi, and the test learns of it", async () => {
    const home = await makePiHome();
    try {
      const run = await runPi({
        home: home.home,
        cwd: home.cwd,
        extensions: [join(REPO_ROOT, "test/setup/fixtures/rejecting-extension.ts")],
        args: ["-p", "hi"],
        script: [{ text: "hello" }],
        timeoutMs: 60_000,
      });
      expect(run.timedOut).toBe(false);
      expect(run.code).not.toBe(0);
      const seen = takeChildCrashes();
      expect(seen.some((line) => line.includes("pi-guard-probe"))).toBe(true);
    } finally {
      await home.cleanup();
    }
  }, 90_000);
});

describe("the summary line (scripts/test-summary.mjs)", () => {
  it("counts each failed test once (in a describe block or not), a file that did not load, and each unhandled error vitest saw, although the JSON report leaves those out", async () => {
    const out = await mkdtemp(join(tmpdir(), "pi-mcp-summary-"));
    try {
      const config = join(REPO_ROOT, "test/setup/fixtures/vitest.summary-probe.config.mjs");
      const vitest = await runProcess(nodeBinary(), [join(REPO_ROOT, "node_modules/vitest/vitest.mjs"), "run", "--config", config], {
        cwd: out,
        env: { PATH: projectPath(), PROBE_OUT: out },
        timeoutMs: 60_000,
      });
      expect(vitest.code).toBe(1);
      const report = JSON.parse(await readFile(join(out, ".vitest-report.json"), "utf8"));
      expect([report.numPassedTests, report.numFailedTests]).toEqual([3, 3]); // the unhandled rejection is not in it
      expect(JSON.parse(await readFile(join(out, ".vitest-unhandled.json"), "utf8")).count).toBe(1);
      const summary = await runProcess(nodeBinary(), [join(REPO_ROOT, "scripts/test-summary.mjs"), join(out, ".vitest-report.json")], {
        cwd: out,
        env: { PATH: projectPath() },
      });
      expect(summary.stdout.trim()).toBe("3 passed, 5 failed");
      expect(summary.code).toBe(1);
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  }, 90_000);
});
