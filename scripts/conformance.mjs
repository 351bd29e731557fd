#!/usr/bin/env node
// Runs the MCP conformance suite against pi-mcp's host, driven by the conformance
// client in test/conformance/client.ts (the kernel, every internal plugin and one
// McpHost; tools are called through the bridged tools, as Pi calls them):
//
//   @modelcontextprotocol/conformance 0.1.16   client --scenario initialize | tools_call |
//                                              elicitation-sep1034-client-defaults | sse-retry,
//                                              then --suite auth | backcompat | draft | extensions
//                                              (together: every client scenario, `--suite all`)
//   @modelcontextprotocol/conformance 0.2.0-α  client --requirements 2025-11-25 | 2026-07-28
//   each with --expected-failures test/conformance/expected-failures.yml
//
// Scenarios of MCP extensions (0.1.16 marks them `[extension]`, 0.2.0 lists them
// as not scored) are run and reported but not scored: the specification leaves
// MCP extensions out.
//
// The client runs as one JavaScript file that vite builds from its sources
// first (.cache/conformance). The runs go one after another (each already
// starts all of its scenarios at once). Prints one line per scenario, a line
// per run, and last
// "conformance: N passed, N failed" (scenario runs; expected failures and
// scenarios that are not scored are counted separately). Exits 1 on any
// unexpected failure, stale expected-failures entry, timeout or runner error.
//
// Usage: node scripts/conformance.mjs [--verbose] [--keep] [--results <dir>] [--only <run>...]
//   --verbose         stream the runners' own output
//   --keep            keep the results folder (kept anyway when something failed)
//   --results <dir>   write results there (default: a temporary folder)
//   --only <run>      run only the named run(s): initialize, tools_call,
//                     elicitation-sep1034-client-defaults, sse-retry, auth, backcompat,
//                     draft, extensions, 2025-11-25, 2026-07-28
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const CLIENT = join(ROOT, "test/conformance/client.ts");
const EXPECTED_FAILURES = join(ROOT, "test/conformance/expected-failures.yml");
const STABLE_PACKAGE = join(ROOT, "node_modules/@modelcontextprotocol/conformance");
const NEXT_PACKAGE = join(ROOT, "node_modules/conformance-next");

/** Per-scenario client timeout (a suite or requirement run starts all of its scenarios at once). */
const SCENARIO_TIMEOUT_MS = 90_000;
/** Hard ceiling for one whole runner process. */
const RUN_LIMIT_MS = 300_000;

const stableRun = (id, args) => ({
  id,
  package: STABLE_PACKAGE,
  args: [...args, "--expected-failures", EXPECTED_FAILURES],
  timeoutMs: SCENARIO_TIMEOUT_MS,
  limitMs: RUN_LIMIT_MS,
});

/**
 * Every run, in order. 0.1.16: its core scenarios one by one (sse-retry measures
 * the reconnection delay, which a loaded machine would distort), then its four
 * other suites; together they are `--suite all`.
 */
export const RUNS = [
  ...["initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"].map((scenario) =>
    stableRun(scenario, ["--scenario", scenario]),
  ),
  ...["auth", "backcompat", "draft", "extensions"].map((suite) => stableRun(suite, ["--suite", suite])),
  ...["2025-11-25", "2026-07-28"].map((revision) => ({
    id: revision,
    package: NEXT_PACKAGE,
    revision,
    args: ["--requirements", revision, "--expected-failures", EXPECTED_FAILURES],
    timeoutMs: SCENARIO_TIMEOUT_MS,
    limitMs: RUN_LIMIT_MS,
  })),
];

/** A Node >= 22 binary: this one if it qualifies, else the project's `node` package. */
function nodeBinary() {
  if (Number(process.versions.node.split(".")[0]) >= 22) return process.execPath;
  return join(ROOT, "node_modules/.bin/node");
}

/** The runner splits --command on spaces and hands it to a shell, so quote for the shell. */
function shellWord(text) {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'"'"'`)}'`;
}

function packageVersion(folder) {
  return JSON.parse(readFileSync(join(folder, "package.json"), "utf8")).version;
}

function packageBin(folder) {
  const { bin } = JSON.parse(readFileSync(join(folder, "package.json"), "utf8"));
  return join(folder, typeof bin === "string" ? bin : bin.conformance);
}

/**
 * The list under a top-level key of a plain YAML file (`key:` then `  - item`,
 * comments allowed). Enough for the expected-failures and requirements files.
 */
export function yamlList(text, key) {
  const items = [];
  let inside = false;
  for (const line of text.split("\n")) {
    if (/^\S/.test(line)) {
      inside = line.replace(/#.*/, "").trim() === `${key}:`;
      continue;
    }
    const item = inside && /^\s+-\s+(.*)$/.exec(line);
    if (!item) continue;
    const value = item[1]
      .replace(/\s+#.*$/, "")
      .trim()
      .replace(/^(["'])(.*)\1$/, "$2");
    // `- scenario: x` entries (not_scored) carry their name in the mapping.
    const named = /^scenario:\s*(.+)$/.exec(value);
    items.push(named ? named[1].trim() : value);
  }
  return items;
}

/** Expected failures: whole scenarios, and single checks per scenario. */
export function readExpectedFailures() {
  const whole = new Set();
  const checks = new Map();
  for (const entry of yamlList(readFileSync(EXPECTED_FAILURES, "utf8"), "client")) {
    const colon = entry.indexOf(":");
    if (colon === -1) whole.add(entry);
    else {
      const scenario = entry.slice(0, colon);
      checks.set(scenario, new Set([...(checks.get(scenario) ?? []), entry.slice(colon + 1)]));
    }
  }
  return { whole, checks };
}

/** The client scenarios a revision scores (the rest of what it runs is reported, not scored). */
export function scoredScenarios(revision) {
  const file = join(NEXT_PACKAGE, "requirements", `${revision}.yaml`);
  return new Set(yamlList(readFileSync(file, "utf8"), "client"));
}

/**
 * The client scenarios of MCP extensions in a runner's `list` output
 * (`  - auth/client-credentials-jwt [extension]`): run and reported, not scored.
 */
export function extensionScenarios(listing) {
  const extensions = new Set();
  let client = false;
  for (const line of listing.split("\n")) {
    if (/^\S/.test(line)) client = /^client scenarios/i.test(line);
    const item = client ? /^\s+-\s+(\S+)\s+\[([^\]]*)\]/.exec(line) : null;
    if (item?.[2].split(",").every((version) => version.trim() === "extension")) extensions.add(item[1]);
  }
  return extensions;
}

/** A runner's `list` output (asked once per runner package). */
const listings = new Map();
export function listScenarios(run) {
  if (!listings.has(run.package)) listings.set(run.package, listOnce(run.package));
  return listings.get(run.package);
}

function listOnce(runnerPackage) {
  return new Promise((resolve, reject) => {
    const child = spawn(nodeBinary(), [packageBin(runnerPackage), "list"], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, FORCE_COLOR: "0", NO_COLOR: "1" },
    });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (chunk) => (output += chunk));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(output) : reject(new Error(`conformance list exited with ${code}`))));
  });
}

/** Whether a run scores a scenario: a requirement set's own list, else every scenario that is not an extension's. */
async function scoringOf(run) {
  if (run.revision) {
    const scored = scoredScenarios(run.revision);
    return { scores: (scenario) => scored.has(scenario), required: [...scored] };
  }
  const extensions = extensionScenarios(await listScenarios(run));
  return { scores: (scenario) => !extensions.has(scenario), required: [] };
}

/** checks.json files under a results folder, keyed by scenario (`<scenario>-<timestamp>/checks.json`). */
function readResults(folder) {
  const results = new Map();
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name === "checks.json") {
        const scenario = relative(folder, dirname(path))
          .split(sep)
          .join("/")
          .replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, "");
        try {
          results.set(scenario, JSON.parse(readFileSync(path, "utf8")));
        } catch {
          results.set(scenario, [{ id: "checks-json", status: "FAILURE", errorMessage: `unreadable ${path}` }]);
        }
      }
    }
  };
  if (existsSync(folder)) walk(folder);
  return results;
}

const BAD = new Set(["FAILURE", "WARNING"]);

/** One scenario's verdict, by the runner's baseline rules. */
function judge(scenario, checks, expected, scored) {
  const failing = checks.filter((check) => BAD.has(check.status));
  const passed = checks.filter((check) => check.status === "SUCCESS").length;
  const base = { scenario, passed, failed: failing.length };
  if (!scored) return { ...base, outcome: "not-scored" };
  if (expected.whole.has(scenario)) return { ...base, outcome: failing.length > 0 ? "expected" : "stale" };
  const excused = expected.checks.get(scenario);
  const unexpected = failing.filter((check) => !excused?.has(check.id));
  if (unexpected.length > 0)
    return {
      ...base,
      outcome: "fail",
      detail: unexpected.map((check) => `${check.id}: ${check.errorMessage ?? check.description ?? check.status}`),
    };
  if (excused) {
    const stale = [...excused].filter(
      (id) => checks.some((check) => check.id === id && check.status === "SUCCESS") && !failing.some((check) => check.id === id),
    );
    if (stale.length > 0) return { ...base, outcome: "stale", detail: stale.map((id) => `${id} now passes`) };
    if (failing.length > 0) return { ...base, outcome: "expected" };
  }
  return { ...base, outcome: "pass" };
}

/** Runner processes still running (each leads its own process group, with the clients it started). */
const running = new Set();

function killGroup(child) {
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    child.kill("SIGKILL");
  }
}

/** On Ctrl-C or a CI cancel, the runners and their clients go too. */
function killRunnersOnSignal() {
  for (const signal of ["SIGINT", "SIGTERM"]) {
    process.once(signal, () => {
      for (const child of running) killGroup(child);
      process.exit(130);
    });
  }
}

/** Runs one runner process; resolves with its exit code and output. */
function runRunner(run, { command, folder, verbose }) {
  const node = nodeBinary();
  const args = [packageBin(run.package), "client", "--command", command, ...run.args, "--timeout", String(run.timeoutMs), "-o", folder];
  return new Promise((resolve) => {
    const child = spawn(node, args, {
      cwd: ROOT,
      env: { ...process.env, PATH: `${join(ROOT, "node_modules/.bin")}:${process.env.PATH ?? ""}`, FORCE_COLOR: "0", NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    running.add(child);
    let output = "";
    const collect = (chunk) => {
      output += chunk;
      if (verbose) process.stderr.write(chunk);
    };
    child.stdout.setEncoding("utf8").on("data", collect);
    child.stderr.setEncoding("utf8").on("data", collect);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      // The runner and every client it started: they share the runner's process group.
      killGroup(child);
    }, run.limitMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      running.delete(child);
      resolve({ code: -1, output: `${output}\n${error.message}`, timedOut });
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      resolve({ code: code ?? (signal ? 128 : -1), output, timedOut });
    });
  });
}

const MARK = { pass: "✓", expected: "~", "not-scored": "·", fail: "✗", stale: "!" };
const LABEL = {
  pass: "",
  expected: " (expected failure)",
  "not-scored": " (not scored)",
  fail: " UNEXPECTED FAILURE",
  stale: " STALE expected-failures entry: it passes now",
};

/**
 * The client as one JavaScript file, built once per run: the runner starts a
 * client per scenario, and each start from the TypeScript sources spent about a
 * second of CPU stripping types (a third of the suite's time). The packages it
 * imports stay outside the bundle and resolve from node_modules; the package's
 * own files it reads are found from the package folder
 * (src/config/package-files.ts), wherever the bundle sits.
 */
async function bundleClient() {
  const { build } = await import("vite");
  const outDir = join(ROOT, ".cache/conformance");
  await build({
    configFile: false,
    root: ROOT,
    logLevel: "warn",
    build: {
      ssr: CLIENT,
      outDir,
      emptyOutDir: true,
      target: "node22",
      minify: false,
      rolldownOptions: { output: { codeSplitting: false } },
    },
  });
  return join(outDir, "client.js");
}

/** Runs the suite; returns the per-run verdicts and the totals. */
export async function runConformance({ only = [], verbose = false, keep = false, results } = {}) {
  const started = performance.now();
  const resultsRoot = results ?? (await mkdtemp(join(tmpdir(), "pi-mcp-conformance-")));
  await mkdir(resultsRoot, { recursive: true });
  const command = [nodeBinary(), await bundleClient()].map(shellWord).join(" ");
  const expected = readExpectedFailures();
  const selected = RUNS.filter((run) => only.length === 0 || only.includes(run.id));
  if (selected.length === 0) throw new Error(`no run named ${only.join(", ")} (runs: ${RUNS.map((run) => run.id).join(", ")})`);
  const totals = { passed: 0, failed: 0, expected: 0, notScored: 0 };
  const runs = [];
  for (const run of selected) {
    const folder = join(resultsRoot, run.id);
    const runStarted = performance.now();
    const version = packageVersion(run.package);
    console.log(
      `\n▶ conformance ${version} client ${run.args
        .filter((arg) => arg !== EXPECTED_FAILURES)
        .join(" ")
        .replace("--expected-failures", "(with expected failures)")}`,
    );
    const outcome = await runRunner(run, { command, folder, verbose });
    await writeFile(join(folder, "runner-output.txt"), outcome.output).catch(() => undefined);
    const scoring = await scoringOf(run);
    const verdicts = [...readResults(folder)]
      .map(([scenario, checks]) => judge(scenario, checks, expected, scoring.scores(scenario)))
      .sort((a, b) => a.scenario.localeCompare(b.scenario));
    for (const verdict of verdicts) {
      console.log(
        `  ${MARK[verdict.outcome]} ${verdict.scenario}: ${verdict.passed} checks passed, ${verdict.failed} failed${LABEL[verdict.outcome]}`,
      );
      for (const line of verdict.detail ?? []) console.log(`      ${line.slice(0, 300)}`);
    }
    const missing = scoring.required.filter((scenario) => !verdicts.some((verdict) => verdict.scenario === scenario));
    for (const scenario of missing) console.log(`  ✗ ${scenario}: no results (did the runner run it?)`);
    const count = (name) => verdicts.filter((verdict) => verdict.outcome === name).length;
    const runFailed = count("fail") + count("stale") + missing.length + (verdicts.length === 0 ? 1 : 0);
    totals.passed += count("pass");
    totals.failed += runFailed;
    totals.expected += count("expected");
    totals.notScored += count("not-scored");
    // The runner's own verdict (it applies the same baseline rules) must agree.
    const runnerFailed = outcome.code !== 0 || outcome.timedOut;
    if (runnerFailed && runFailed === 0) totals.failed += 1;
    const seconds = ((performance.now() - runStarted) / 1000).toFixed(1);
    const why = outcome.timedOut ? `killed after ${run.limitMs / 1000} s` : runnerFailed ? `runner exit ${outcome.code}` : "runner exit 0";
    console.log(
      `  ${runFailed > 0 || runnerFailed ? "✗" : "✓"} ${run.id}: ${count("pass")} passed, ${runFailed} failed, ${count("expected")} expected failures, ${count("not-scored")} not scored (${why}, ${seconds} s)`,
    );
    if (runnerFailed && !verbose) {
      const tail = outcome.output.split("\n").slice(-25).join("\n");
      console.log(`  runner output (last lines; all of it in ${join(folder, "runner-output.txt")}):\n${tail.replace(/^/gm, "    | ")}`);
    }
    runs.push({ id: run.id, version, code: outcome.code, timedOut: outcome.timedOut, verdicts });
  }
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const failed = totals.failed > 0;
  if (failed || keep || results) console.log(`\nresults: ${resultsRoot}`);
  else await rm(resultsRoot, { recursive: true, force: true });
  console.log(
    `\nconformance: ${totals.passed} passed, ${totals.failed} failed (${totals.expected} expected failures, ${totals.notScored} not scored; ${seconds} s)`,
  );
  return { ok: !failed, totals, runs, seconds: Number(seconds), resultsDir: resultsRoot };
}

function parseArgs(argv) {
  const options = { only: [], verbose: false, keep: false, results: undefined };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--verbose") options.verbose = true;
    else if (arg === "--keep") options.keep = true;
    else if (arg === "--results") options.results = argv[++i];
    else if (arg === "--only") options.only.push(argv[++i]);
    else throw new Error(`unknown argument ${arg}`);
  }
  return options;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  killRunnersOnSignal();
  try {
    const { ok } = await runConformance(parseArgs(process.argv.slice(2)));
    process.exit(ok ? 0 : 1);
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    console.log("conformance: 0 passed, 1 failed");
    process.exit(1);
  }
}
