/**
 * 8. Against Pi's built-in MCP: the same real Pi 1.6, the same stdio server,
 * once with pi-mcp (settings.json) and once with Pi's built-in MCP
 * (`<agentDir>/mcp.json`, exposure direct, run without pi-mcp: pi-mcp
 * replaces it when loaded), alternating run by run.
 *
 * - Round trip of one tool call through Pi (bench/pi/call-loop.ts: the model
 *   calls a stdio fixture tool answering 1,000 characters over and over; the
 *   time between two model requests), and the main thread's CPU time per call;
 *   the same against a Streamable HTTP fixture on loopback.
 * - What the session keeps per call: the JS heap after a full collection
 *   (NODE_OPTIONS=--expose-gc) after the warm-up calls and after the last,
 *   per call; beside Pi's own `read` of a file holding the same text (a
 *   built-in tool's result of the same size).
 * - Memory with a big catalog: Pi's peak RSS until 5,000 tools are active on
 *   a first start (the stall probe, test/e2e/fixtures/stall-probe.ts).
 * - 1,000 tools of one server on a first start: spawn → the model's first
 *   request, which must declare all of them (bench 3b's runs, startup.ts).
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { makePiHome, NODE, REPO_ROOT, runPi } from "../test/e2e/harness/pi.ts";
import { fixturePath, median, round, type BenchResult, type Row } from "./lib.ts";
import { startHttpFixture } from "../test/helpers/servers.ts";
import type { StallReport } from "../test/e2e/fixtures/stall-probe.ts";
import { registrationRun } from "./registration.ts";
import { firstStart } from "./startup.ts";

const CALL_LOOP = join(REPO_ROOT, "bench/pi/call-loop.ts");
type Side = "pi-mcp" | "built-in";
const KIB_PER_MIB = 1024;
/** How a start with a big catalog begins (see registrationRun's `earlier`); `built-in` is Pi's built-in MCP. */
type CatalogStart = Side | "checked" | "known";

function catalogStart(start: CatalogStart, tools: number): Promise<StallReport> {
  if (start === "checked" || start === "known") return registrationRun("pi-mcp", tools, undefined, start);
  return registrationRun(start, tools);
}

interface LoopResult {
  calls: number;
  failures: number;
  firstError?: string;
  perCallMs: number[];
  cpuPerCallMs: number;
  retainedPerCall?: number;
}

/** Writes the settings of `side` for one stdio server named `name`. */
async function configure(agentDir: string, side: Side, name: string, command: string, args: string[], env: Record<string, string> = {}) {
  if (side === "pi-mcp")
    await writeFile(join(agentDir, "settings.json"), JSON.stringify({ mcp: { servers: { [name]: { command, args, environment: env } } } }));
  else await writeFile(join(agentDir, "mcp.json"), JSON.stringify({ mcpServers: { [name]: { command, args, env, exposure: "direct" } } }));
}

/** Writes the settings of `side` for one Streamable HTTP server named `name`. */
async function configureRemote(agentDir: string, side: Side, name: string, url: string) {
  if (side === "pi-mcp") await writeFile(join(agentDir, "settings.json"), JSON.stringify({ mcp: { servers: { [name]: { url } } } }));
  else await writeFile(join(agentDir, "mcp.json"), JSON.stringify({ mcpServers: { [name]: { url, exposure: "direct" } } }));
}

/** Where the called tool runs: a stdio fixture Pi starts, or a Streamable HTTP fixture on loopback (2025 era, JSON answers). */
type CallTransport = "stdio" | "http";

/**
 * One Pi run of the call loop: `side`'s call of the `big-output` fixture's `big` ({bytes}: a text of that many
 * characters; small arguments, so the transcript holds the result and little else), or Pi's own `read` (side
 * "read") of a file holding the same text.
 */
export async function callLoop(
  side: Side | "read",
  calls: number,
  warmup: number,
  bytes: number,
  transport: CallTransport = "stdio",
): Promise<LoopResult> {
  const home = await makePiHome();
  const remote = side !== "read" && transport === "http" ? await startHttpFixture("http-faults") : undefined;
  try {
    const out = join(home.home, "loop.json");
    let env: Record<string, string>;
    if (side === "read") {
      await writeFile(join(home.cwd, "big.txt"), "x".repeat(bytes));
      env = { BENCH_TOOL: "read", BENCH_ARGS: JSON.stringify({ path: "big.txt" }) };
    } else {
      if (remote) await configureRemote(home.agentDir, side, "out", remote.url);
      else await configure(home.agentDir, side, "out", NODE, [fixturePath("big-output")]);
      env = { BENCH_TOOL: "mcp__out__big", BENCH_ARGS: JSON.stringify({ bytes }) };
    }
    const run = await runPi({
      home: home.home,
      cwd: home.cwd,
      faux: false,
      extensions: side === "pi-mcp" ? [REPO_ROOT, CALL_LOOP] : [CALL_LOOP],
      // The first request of pi-mcp's run waits for the server at most firstRequestWaitMs; /mcp wait makes sure (this measures calls).
      args: ["--provider", "benchloop", "--model", "faux-1", "-p", ...(side === "pi-mcp" ? ["/mcp wait"] : []), "go"],
      env: {
        ...env,
        BENCH_CALLS: String(calls),
        BENCH_WARMUP: String(warmup),
        BENCH_OUT: out,
        NODE_OPTIONS: `--expose-gc ${process.env.BENCH_NODE_OPTIONS ?? ""}`.trim(),
      },
      timeoutMs: 600_000,
    });
    if (run.code !== 0) throw new Error(`call loop (${side}) failed: code ${run.code}\n${run.stderr.slice(-2000)}`);
    const result = JSON.parse(await readFile(out, "utf8")) as LoopResult;
    if (result.failures > 0) throw new Error(`call loop (${side}): ${result.failures} calls failed: ${result.firstError}`);
    return result;
  } finally {
    await remote?.stop();
    await home.cleanup();
  }
}

/** The round trip's row and the CPU's row of one transport's call loops: pi-mcp against the built-in, run by run. */
function callRows(roundTrip: string, cpuPerCall: string, loops: Record<Side, LoopResult[]>): Row[] {
  const perCall = (side: Side) => loops[side].map((loop) => median(loop.perCallMs));
  const cpu = (side: Side) => loops[side].map((loop) => loop.cpuPerCallMs);
  const paired = (values: (side: Side) => number[]) => median(values("pi-mcp").map((value, i) => value / values("built-in")[i]!));
  const ratio = paired(perCall);
  const bench = "8. vs Pi's built-in MCP";
  return [
    {
      bench,
      metric: roundTrip,
      piMcp: round(median(perCall("pi-mcp")), 2),
      raw: round(median(perCall("built-in")), 2),
      ratio: round(ratio, 2),
      unit: "ms",
      goal: "ratio ≤ 1.00",
      met: ratio <= 1,
    },
    {
      bench,
      metric: cpuPerCall,
      piMcp: round(median(cpu("pi-mcp")), 2),
      raw: round(median(cpu("built-in")), 2),
      ratio: round(paired(cpu), 2),
      unit: "ms",
    },
  ];
}

export async function builtin({
  rounds = 5,
  calls = 300,
  warmup = 50,
  catalogTools = 5_000,
  firstTools = 1_000,
  firstRounds = 3,
  catalogRounds = 3,
} = {}): Promise<BenchResult> {
  const bytes = 1_000;
  const loops = new Map<Side | "read", LoopResult[]>([
    ["pi-mcp", []],
    ["built-in", []],
    ["read", []],
  ]);
  for (let i = 0; i < rounds; i++) {
    const order: (Side | "read")[] = i % 2 === 0 ? ["pi-mcp", "built-in", "read"] : ["read", "built-in", "pi-mcp"];
    for (const side of order) loops.get(side)!.push(await callLoop(side, calls, warmup, bytes));
  }
  const kept = (side: Side | "read") => loops.get(side)!.map((loop) => loop.retainedPerCall ?? Number.NaN);

  // The same calls to a Streamable HTTP server on loopback (started by the bench, the same for both sides).
  const remoteLoops: Record<Side, LoopResult[]> = { "pi-mcp": [], "built-in": [] };
  for (let i = 0; i < rounds; i++) {
    const order: Side[] = i % 2 === 0 ? ["pi-mcp", "built-in"] : ["built-in", "pi-mcp"];
    for (const side of order) remoteLoops[side].push(await callLoop(side, calls, warmup, bytes, "http"));
  }

  // One server of 1,000 tools on a first start (bench 3b's runs): spawn → the first model request, and its tools.
  const first = await firstStart({ rounds: firstRounds, servers: 1, tools: firstTools });

  // Peak memory with a big catalog: pi-mcp's first start, its second start with the settings checked before
  // (no arktype) but the catalog cache off, its second start with the catalog known; and the built-in (no state).
  const starts = { "pi-mcp": [], checked: [], known: [], "built-in": [] } as Record<CatalogStart, StallReport[]>;
  for (let i = 0; i < catalogRounds; i++) {
    const order: CatalogStart[] = i % 2 === 0 ? ["pi-mcp", "checked", "known", "built-in"] : ["built-in", "known", "checked", "pi-mcp"];
    for (const start of order) starts[start].push(await catalogStart(start, catalogTools));
  }
  const peak = (start: CatalogStart) => median(starts[start].map((report) => report.maxRssKiB)) / KIB_PER_MIB;
  const catalog = { "pi-mcp": starts["pi-mcp"][0]!, "built-in": starts["built-in"][0]! };
  const peakRow = (start: CatalogStart, which: string): Row => ({
    bench: "8. vs Pi's built-in MCP",
    metric: `peak RSS until ${catalogTools} tools are active, ${which} (median of ${catalogRounds} runs each; the built-in: every start)`,
    piMcp: round(peak(start), 0),
    raw: round(peak("built-in"), 0),
    ratio: round(peak(start) / peak("built-in"), 2),
    unit: "MiB",
    goal: "ratio ≤ 1.00",
    met: peak(start) <= peak("built-in"),
  });

  const rows: Row[] = [
    ...callRows(
      `tool-call round trip through Pi (a stdio fixture tool answering ${bytes} characters, ${calls - warmup} calls after ${warmup}, ${rounds} runs each side), median; ratio = median of the paired runs' ratios`,
      "Pi's main-thread CPU per call (same runs)",
      { "pi-mcp": loops.get("pi-mcp")!, "built-in": loops.get("built-in")! },
    ),
    ...callRows(
      `the same round trip to a Streamable HTTP server on loopback (a 2025-era fixture answering ${bytes} characters as JSON; ${rounds} runs each side)`,
      "Pi's main-thread CPU per call over Streamable HTTP (same runs)",
      remoteLoops,
    ),
    {
      bench: "8. vs Pi's built-in MCP",
      metric: `what the session keeps per call: JS heap after a full GC, per call (the same runs; Pi's own read of a file with the same ${bytes} characters: ${round(median(kept("read")) / 1024, 1)} KiB)`,
      piMcp: round(median(kept("pi-mcp")) / 1024, 1),
      raw: round(median(kept("built-in")) / 1024, 1),
      ratio: round(median(kept("pi-mcp")) / median(kept("read")), 2),
      unit: "KiB",
      goal: "≤ Pi's read (ratio ≤ 1.00, vs read)",
      met: median(kept("pi-mcp")) <= median(kept("read")) * 1.05,
    },
    peakRow("pi-mcp", "first start"),
    peakRow("checked", "second start, settings checked before (catalog cache off: the tools register as on a first start)"),
    peakRow("known", "second start, catalog known"),
    ...first.rows.map((row) => ({ ...row, bench: "8. vs Pi's built-in MCP", metric: `${firstTools} tools, one server: ${row.metric}` })),
  ];
  return {
    name: "builtin",
    rows,
    notes: [
      ...first.notes,
      `Against the built-in: ${catalogTools} tools took pi-mcp ${round(catalog["pi-mcp"].totalMs / 1000, 1)} s and the built-in ${round(catalog["built-in"].totalMs / 1000, 1)} s from session start (longest blocks of work ${round(catalog["pi-mcp"].maxBlockCpuMs, 0)} ms and ${round(catalog["built-in"].maxBlockCpuMs / 1000, 1)} s of CPU).`,
    ],
  };
}
