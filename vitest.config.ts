import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Real processes (servers, Pi) are spawned by many tests: two cores, so keep it modest.
    maxWorkers: 2,
    // .ci/run reads the JSON report for its "N passed, N failed" line.
    reporters: ["default", ["json", { outputFile: ".vitest-report.json" }]],
  },
});
