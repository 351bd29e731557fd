import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Tests wait for events, not time; these bounds only end a test that is stuck. They are generous
    // because a test's own work (servers, Pi) runs at half speed or less when both cores are busy.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Real processes (servers, Pi) are spawned by many tests, which mostly wait on them (shutdown budgets,
    // servers starting, bounded waits): three workers on the two-core machines CI runs on keep both cores busy
    // (with two, a full run left about a quarter of the cores' time idle and took 19 of its 20 minutes).
    maxWorkers: 3,
    // A test fails when an unhandled rejection or uncaught exception happens while it runs (also in Pi or the CLI it started).
    setupFiles: ["test/setup/unhandled.ts"],
    // Pi, and the tests of the program, run the build: dist/ is built first when a source is newer than it.
    globalSetup: ["test/setup/built-core.ts"],
    // .ci/run reads the JSON report (and the unhandled errors vitest saw) for its "N passed, N failed" line.
    reporters: ["default", ["json", { outputFile: ".vitest-report.json" }], "./test/setup/unhandled-reporter.ts"],
  },
});
