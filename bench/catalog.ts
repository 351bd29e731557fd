/**
 * 2. Catalog: a server with 5,000 tools over 50 pages. pi-mcp: from the
 * moment the SDK connect resolves until the host has handed all 5,000 tools
 * to its sink (paging, per-tool checks, naming, diffing, the coalescing
 * window). Raw SDK: from connect until every page is listed. Rounds alternate.
 */
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createKernel } from "../src/composition.ts";
import type { KernelPlugin } from "../src/kernel/kernel.ts";
import type { ToolSink } from "../src/runtime/host.ts";
import { fixtureServer, startHost } from "../test/helpers/host.ts";
import { fixturePath, median, nodePath, rawListAll, rawStdioClient, round, type BenchResult, type Row } from "./lib.ts";

const ENV = (tools: number, pageSize: number) => ({ FIXTURE_TOOLS: String(tools), FIXTURE_PAGE_SIZE: String(pageSize) });

interface Round {
  /** spawn → connect resolved */
  connect: number;
  /** connect resolved → all tools listed (raw) / registered (pi-mcp) */
  catalog: number;
  /** spawn → all tools */
  total: number;
}

async function rawRound(tools: number, pageSize: number): Promise<Round> {
  const start = performance.now();
  const raw = await rawStdioClient(nodePath(), [fixturePath("many-tools")], { env: ENV(tools, pageSize) });
  const connected = performance.now();
  const listed = await rawListAll(raw.client);
  const done = performance.now();
  if (listed.length !== tools) throw new Error(`raw listed ${listed.length} tools`);
  await raw.close();
  return { connect: connected - start, catalog: done - connected, total: done - start };
}

async function hostRound(tools: number, pageSize: number): Promise<Round> {
  let connected = 0;
  // Marks the moment the SDK's connect resolves: the host calls client.connect right after this hook.
  const mark: KernelPlugin = {
    name: "bench-connect-mark",
    apply(kernel) {
      kernel.hooks.clientCreated.tap("bench-connect-mark", (live) => {
        const connect = live.client.connect.bind(live.client);
        live.client.connect = (async (...args: Parameters<typeof connect>) => {
          const result = await connect(...args);
          connected = performance.now();
          return result;
        }) as typeof connect;
      });
    },
  };
  const h = await startHost(
    { many: fixtureServer("many-tools", ENV(tools, pageSize)) },
    { connectTimeoutMs: 30_000, requestTimeoutMs: 30_000, kernel: createKernel({ plugins: [mark] }), start: false },
  );
  let registered = 0;
  let resolveDone!: (at: number) => void;
  const done = new Promise<number>((resolve) => (resolveDone = resolve));
  // The sink only counts (as the raw side only lists): what is measured is the host's work, not a recorder's.
  (h.sink as { register: ToolSink["register"] }).register = (batch) => {
    registered += batch.length;
    if (registered >= tools) resolveDone(performance.now());
  };
  const start = performance.now();
  h.host.start();
  const finished = await done;
  await h.stop();
  return { connect: connected - start, catalog: finished - connected, total: finished - start };
}

export async function catalog({ tools = 5_000, pageSize = 100, rounds = 9 } = {}): Promise<BenchResult> {
  // One unmeasured round each: module loading and JIT warm-up.
  await rawRound(tools, pageSize);
  await hostRound(tools, pageSize);
  const raw: Round[] = [];
  const host: Round[] = [];
  for (let i = 0; i < rounds; i++) {
    if (i % 2 === 0) {
      raw.push(await rawRound(tools, pageSize));
      host.push(await hostRound(tools, pageSize));
    } else {
      host.push(await hostRound(tools, pageSize));
      raw.push(await rawRound(tools, pageSize));
    }
  }
  const m = (rounds: Round[], key: keyof Round) => median(rounds.map((round) => round[key]));
  // Each round's pair (run back to back) gives a ratio; their median is robust to drift between rounds.
  const paired = (key: keyof Round) => median(host.map((round, i) => round[key] / raw[i]![key]));
  const ratio = paired("catalog");
  const pages = Math.ceil(tools / pageSize);
  const rows: Row[] = [
    {
      bench: "2. catalog",
      metric: `${tools} tools / ${pages} pages: connect → all registered (pi-mcp sink) vs all listed (raw); medians, ratio = median of ${rounds} paired rounds`,
      piMcp: round(m(host, "catalog"), 1),
      raw: round(m(raw, "catalog"), 1),
      ratio: round(ratio, 2),
      unit: "ms",
      goal: "ratio ≤ 1.25",
      met: ratio <= 1.25,
    },
    {
      bench: "2. catalog",
      metric: "spawn → all tools (context: includes process start and era negotiation)",
      piMcp: round(m(host, "total"), 1),
      raw: round(m(raw, "total"), 1),
      ratio: round(paired("total"), 2),
      unit: "ms",
    },
  ];
  return { name: "catalog", rows, notes: [] };
}

/**
 * The same catalog into a real Pi 1.6 (print mode, offline): from
 * session_start until Pi lists all tools. Pi's own registration is quadratic
 * after start-up (see the notes), so the yardstick is Pi's floor — a bare
 * extension registering as many trivial tools right after session_start —
 * plus the raw SDK's spawn → listed time for the same server.
 */
export async function catalogPi({ tools = 5_000, pageSize = 100 } = {}): Promise<BenchResult> {
  const { makePiHome, NODE, REPO_ROOT, runPi } = await import("../test/e2e/harness/pi.ts");
  const { readFile, writeFile } = await import("node:fs/promises");
  const probe = join(REPO_ROOT, "bench/pi/catalog-probe.ts");
  const once = async (mode: "floor" | "pi-mcp") => {
    const home = await makePiHome();
    try {
      const many = { command: NODE, args: [fixturePath("many-tools")], environment: ENV(tools, pageSize) };
      await writeFile(join(home.agentDir, "settings.json"), JSON.stringify({ mcp: { exposure: "direct", servers: { many } } }));
      const out = join(home.home, "catalog.json");
      const run = await runPi({
        home: home.home,
        cwd: home.cwd,
        faux: false,
        extensions: mode === "pi-mcp" ? [REPO_ROOT, probe] : [probe],
        args: ["-p", "/bench-catalog"],
        env: { BENCH_MODE: mode, BENCH_TOOLS: String(tools), BENCH_OUT: out },
        timeoutMs: 240_000,
      });
      if (run.code !== 0) throw new Error(`pi (${mode}) failed: code ${run.code}\n${run.stderr.slice(-2000)}`);
      return (JSON.parse(await readFile(out, "utf8")) as { ms: number }).ms;
    } finally {
      await home.cleanup();
    }
  };
  const raw = await rawRound(tools, pageSize);
  const floor = await once("floor");
  const piMcp = await once("pi-mcp");
  const yardstick = floor + raw.total;
  const ratio = piMcp / yardstick;
  return {
    name: "catalog-pi",
    rows: [
      {
        bench: "2. catalog",
        metric: `into a real Pi 1.6: session start → ${tools} tools registered, pi-mcp vs Pi's own registration floor (${round(floor, 0)} ms) + raw spawn → listed (${round(raw.total, 0)} ms), one run each`,
        piMcp: round(piMcp, 0),
        raw: round(yardstick, 0),
        ratio: round(ratio, 2),
        unit: "ms",
        goal: "ratio ≤ 1.25",
        met: ratio <= 1.25,
      },
    ],
    notes: [
      `Into Pi: registering ${tools} tools one by one after start-up costs Pi itself ${round(floor / 1000, 1)} s (its tool registry is rebuilt on every registerTool; quadratic), which dominates any host's cost.`,
    ],
  };
}
