// Prints "N passed, N failed" from a vitest JSON report; exits 1 when anything
// failed, the report is missing, or no test ran at all. Every unhandled error
// vitest saw (written beside the report by test/setup/unhandled-reporter.ts)
// counts as one failure; a missing file of them counts as one too.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";

const file = process.argv[2] ?? ".vitest-report.json";
let report;
try {
  report = JSON.parse(readFileSync(file, "utf8"));
} catch {
  console.log("0 passed, 1 failed");
  process.exit(1);
}
const passed = report.numPassedTests ?? 0;
// A test file that failed with no failed test of its own (it did not load, a hook failed) counts once too.
const failed =
  (report.numFailedTests ?? 0) +
  countFilesFailedWithoutFailedTests(report) +
  countUnhandledErrors(join(dirname(file), ".vitest-unhandled.json"));
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);

function countUnhandledErrors(path) {
  try {
    const count = JSON.parse(readFileSync(path, "utf8")).count;
    return Number.isInteger(count) && count >= 0 ? count : 1;
  } catch {
    return 1;
  }
}

// (numFailedTestSuites counts describe blocks as well as files, so it cannot be used: two failed tests made "3 failed".)
function countFilesFailedWithoutFailedTests(data) {
  return (data.testResults ?? []).filter(
    (file) => file.status === "failed" && !(file.assertionResults ?? []).some((test) => test.status === "failed"),
  ).length;
}
