/**
 * pi-mcp benchmarks against the raw MCP SDK (npm run bench).
 *
 *   node --experimental-transform-types --no-warnings bench/run.ts [--only a,b] [--no-pi]
 *
 * Each benchmark runs in its own Node process, one after another (two cores:
 * never two heavy things at once). The runner prints a markdown table with the
 * machine it ran on and writes it to bench/results/<date>.md (ignored by git)
 * and bench/RESULTS.md (committed, quoted by the README).
 *
 * Benchmarks: call-overhead, catalog, catalog-pi, startup, first-start, memory, concurrency, instant, registration, builtin, connect.
 * `--no-pi` leaves out the six that run a real Pi (catalog-pi, startup, first-start, instant, registration, builtin).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { BenchResult, Row } from "./lib.ts";
import { reportResult, runWorker } from "./worker.ts";

const BENCH_DIR = fileURLToPath(new URL(".", import.meta.url));

/** Every function a worker process can run, by name. */
async function workerFunctions(): Promise<Record<string, (options: Record<string, unknown>) => Promise<unknown>>> {
  const [
    { callOverhead },
    { catalog, catalogPi },
    { startup, firstStart },
    memory,
    { concurrency },
    { instant },
    { registration },
    { builtin },
    { connect },
  ] = await Promise.all([
    import("./call-overhead.ts"),
    import("./catalog.ts"),
    import("./startup.ts"),
    import("./memory.ts"),
    import("./concurrency.ts"),
    import("./instant.ts"),
    import("./registration.ts"),
    import("./builtin.ts"),
    import("./connect.ts"),
  ]);
  return {
    "call-overhead": callOverhead,
    catalog,
    "catalog-pi": catalogPi,
    startup,
    "first-start": firstStart,
    memory: memory.memory,
    memoryHostServers: memory.memoryHostServers,
    memoryRawServers: memory.memoryRawServers,
    memoryFlood: memory.memoryFlood,
    memoryRawFlood: memory.memoryRawFlood,
    memoryResult: memory.memoryResult,
    memoryRawResult: memory.memoryRawResult,
    memorySettingsRead: memory.memorySettingsRead,
    concurrency,
    instant,
    registration,
    builtin,
    connect,
  };
}

const BENCHMARKS = [
  "call-overhead",
  "catalog",
  "catalog-pi",
  "startup",
  "first-start",
  "memory",
  "concurrency",
  "instant",
  "registration",
  "builtin",
  "connect",
] as const;
const NEEDS_PI = new Set(["catalog-pi", "startup", "first-start", "instant", "registration", "builtin"]);
/** Benchmarks that take longer than a worker's default bound: registering 20,000 tools costs Pi itself minutes (quadratic). */
const WORKER_TIMEOUT_MS: Partial<Record<(typeof BENCHMARKS)[number], number>> = { registration: 7_200_000, builtin: 3_600_000 };

function cell(value: number | string | undefined): string {
  if (value === undefined) return "";
  return typeof value === "number" ? value.toLocaleString("en-US", { maximumFractionDigits: 3 }) : value;
}

function table(rows: readonly Row[]): string {
  const lines = [
    "| Benchmark | Measure | pi-mcp | raw SDK / baseline | Ratio | Unit | Goal | Met |",
    "|---|---|---:|---:|---:|---|---|---|",
  ];
  for (const row of rows) {
    const met = row.met === undefined ? "" : row.met ? "yes" : "**no**";
    lines.push(
      `| ${row.bench} | ${row.metric} | ${cell(row.piMcp)} | ${cell(row.raw)} | ${cell(row.ratio)} | ${row.unit} | ${row.goal ?? ""} | ${met} |`,
    );
  }
  return lines.join("\n");
}

function cpuModel(): string {
  try {
    const info = execFileSync("sh", ["-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"], { encoding: "utf8" }).trim();
    if (info) return info;
  } catch {
    // not Linux
  }
  return "unknown CPU";
}

function nproc(): string {
  try {
    return execFileSync("nproc", { encoding: "utf8" }).trim();
  } catch {
    return "?";
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const workerIndex = args.indexOf("--worker");
  if (workerIndex !== -1) {
    const name = args[workerIndex + 1]!;
    const options = JSON.parse(args[workerIndex + 2] ?? "{}") as Record<string, unknown>;
    const fn = (await workerFunctions())[name];
    if (!fn) throw new Error(`no benchmark "${name}"`);
    reportResult(await fn(options));
    // Stray handles (a child's pipe) must not keep a worker alive.
    process.exit(0);
  }
  const onlyIndex = args.indexOf("--only");
  const only = onlyIndex === -1 ? undefined : new Set(args[onlyIndex + 1]!.split(","));
  const selected = BENCHMARKS.filter((name) => (only ? only.has(name) : !(args.includes("--no-pi") && NEEDS_PI.has(name))));

  const started = Date.now();
  const load = loadavg()
    .map((value) => value.toFixed(2))
    .join(", ");
  const results: BenchResult[] = [];
  for (const name of selected) {
    const t = Date.now();
    process.stderr.write(`bench: ${name} ...`);
    try {
      results.push(await runWorker<BenchResult>(name, {}, WORKER_TIMEOUT_MS[name]));
      process.stderr.write(` ${((Date.now() - t) / 1000).toFixed(1)} s\n`);
    } catch (error) {
      process.stderr.write(` failed\n${error instanceof Error ? error.message : String(error)}\n`);
      results.push({
        name,
        rows: [{ bench: name, metric: "failed to run (see the runner's output)", piMcp: "—", unit: "", goal: "runs", met: false }],
        notes: [],
      });
    }
  }
  const seconds = (Date.now() - started) / 1000;
  const rows = results.flatMap((result) => result.rows);
  const notes = results.flatMap((result) => result.notes);
  const machine = `${nproc()} × ${cpuModel()}, Node ${process.version}, ${process.platform} ${process.arch}`;
  const goals = rows.filter((row) => row.met !== undefined);
  const markdown = [
    "# pi-mcp benchmarks",
    "",
    `Run ${new Date(started).toISOString().slice(0, 16).replace("T", " ")} UTC on ${machine}; load average at start ${load}; ${seconds.toFixed(0)} s in all.`,
    `Goals met: ${goals.filter((row) => row.met).length} of ${goals.length}. Every ratio is pi-mcp's figure over the raw SDK's (or the stated baseline) measured in the same run; times are medians unless the row says otherwise.`,
    "",
    table(rows),
    "",
    ...(notes.length > 0 ? ["Notes:", "", ...notes.map((note) => `- ${note}`), ""] : []),
    "Method and the causes of missed goals: bench/README.md. Reproduce with `npm run bench`.",
    "",
  ].join("\n");
  process.stdout.write(`${markdown}\n`);
  mkdirSync(join(BENCH_DIR, "results"), { recursive: true });
  writeFileSync(join(BENCH_DIR, "results", `${new Date(started).toISOString().replace(/[:.]/g, "-")}.md`), markdown);
  if (!only) writeFileSync(join(BENCH_DIR, "RESULTS.md"), markdown);
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
