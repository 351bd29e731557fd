import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Real processes (servers, Pi) are spawned by many tests: two cores, so keep it modest.
    maxWorkers: 2,
    // A test fails when an unhandled rejection or uncaught exception happens while it runs (also in Pi or the CLI it started).
    setupFiles: ["test/setup/unhandled.ts"],
    // .ci/run reads the JSON report (and the unhandled errors vitest saw) for its "N passed, N failed" line.
    reporters: ["default", ["json", { outputFile: ".vitest-report.json" }], "./test/setup/unhandled-reporter.ts"],
  },
});
