/**
 * Writes the unhandled errors vitest saw in a run (rejections and exceptions
 * nobody caught) to `.vitest-unhandled.json`;
 * scripts/test-summary.mjs counts each as a failure in its "N passed, N
 * failed" line (vitest's JSON report leaves them out).
 */
import { writeFileSync } from "node:fs";
import type { Reporter, SerializedError, TestModule } from "vitest/node";

export const UNHANDLED_FILE = ".vitest-unhandled.json";

export default class UnhandledErrorsReporter implements Reporter {
  onTestRunEnd(_modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>): void {
    const errors = unhandledErrors.map((error) => ({ name: error.name, message: error.message }));
    writeFileSync(UNHANDLED_FILE, `${JSON.stringify({ count: errors.length, errors }, null, 2)}\n`);
  }
}
