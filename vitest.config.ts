import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Tests wait for events, not time; these bounds only end a test that is stuck. They are generous
    // because a test's own work (servers, Pi) runs at half speed or less when both cores are busy.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Real processes (servers, Pi) are spawned by many tests and mostly wait on them: one worker per
    // core of the two-core machines CI runs on (more would only queue behind them).
    maxWorkers: 2,
    // A test fails when an unhandled rejection or uncaught exception happens while it runs (also in Pi or the CLI it started).
    setupFiles: ["test/setup/unhandled.ts"],
    // .ci/run reads the JSON report (and the unhandled errors vitest saw) for its "N passed, N failed" line.
    reporters: ["default", ["json", { outputFile: ".vitest-report.json" }], "./test/setup/unhandled-reporter.ts"],
  },
});
