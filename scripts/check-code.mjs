// Formatting and lint in one pass (`biome ci .`): exits 1 on any finding, infos included.
// Biome's exit status counts errors only (and warnings with --error-on-warnings), so a
// recommended rule of info severity (style/useTemplate, ...) would pass unseen: the count
// comes from Biome's JSON report (Biome is pinned exactly; a report that does not parse
// fails too). Prints Biome's own report of any finding, then one line with the counts.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";

const biome = createRequire(import.meta.url).resolve("@biomejs/biome/bin/biome");
const ci = (...args) =>
  spawnSync(process.execPath, [biome, "ci", "--colors=off", ...args, "."], { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });

const report = ci("--reporter=json", "--max-diagnostics=0");
let summary;
try {
  summary = JSON.parse(report.stdout).summary;
} catch {
  process.stdout.write(report.stdout + report.stderr);
  console.log("biome: no report to count (see above)");
  process.exit(1);
}
const findings = summary.errors + summary.warnings + summary.infos;
if (findings > 0) {
  const shown = ci("--max-diagnostics=none");
  process.stdout.write(shown.stdout + shown.stderr);
}
console.log(
  `biome: ${summary.errors} errors, ${summary.warnings} warnings, ${summary.infos} infos (${summary.changed + summary.unchanged} files)`,
);
process.exit(findings > 0 ? 1 : 0);
