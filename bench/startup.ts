/**
 * 3. Start-up: a real `pi -p hi` (Pi 1.6, offline faux model) with pi-mcp and
 * ten configured stdio servers that each take 2 s to start, versus the same
 * run without pi-mcp. Measured: time from spawning Pi until the model receives
 * its first request (written by bench/pi/first-request.ts). A third variant,
 * pi-mcp with no servers, separates loading the extension from starting servers.
 * Variants run interleaved, round by round. The slow servers' settings turn
 * the first-request wait off (`firstRequestWaitMs: 0`): this measures what
 * pi-mcp adds to Pi's start when nothing is waited for.
 *
 * 3b. First start with five servers of 20 tools (fresh agent folders, the
 * catalogs not known): how many MCP tools the model's first request carries
 * and the time from spawning Pi until that request, pi-mcp (default
 * settings: it waits for the servers) versus Pi's built-in MCP (the same
 * servers in `<agentDir>/mcp.json` with `direct` exposure, pi-mcp not
 * loaded), interleaved.
 */
import { readFile, writeFile } from "node:fs/promises";
import { loadavg } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { makePiHome, NODE, REPO_ROOT, runPi } from "../test/e2e/harness/pi.ts";
import { piMcpInHome } from "../test/helpers/tmp.ts";
import { fixturePath, median, round, type BenchResult } from "./lib.ts";

const FIRST_REQUEST = join(REPO_ROOT, "bench/pi/first-request.ts");

type Variant = "without pi-mcp" | "pi-mcp, no servers" | "pi-mcp, 10 slow servers";

interface Sample {
  firstRequest: number;
  exit: number;
}

async function runOnce(variant: Variant, servers: number, delayMs: number): Promise<Sample> {
  const home = await makePiHome();
  try {
    const slow = Object.fromEntries(
      Array.from({ length: variant === "pi-mcp, 10 slow servers" ? servers : 0 }, (_, i) => [
        `slow${i}`,
        { command: NODE, args: [fixturePath("slow-start")], environment: { FIXTURE_START_DELAY_MS: String(delayMs) } },
      ]),
    );
    // The same settings file in every variant (Pi itself ignores the `mcp` key); no first-request wait (see above).
    await writeFile(
      join(home.agentDir, "settings.json"),
      JSON.stringify({ mcp: { firstRequestWaitMs: 0, exposure: "direct", servers: slow } }),
    );
    const out = join(home.home, "first-request.txt");
    const extensions = variant === "without pi-mcp" ? [FIRST_REQUEST] : [REPO_ROOT, FIRST_REQUEST];
    const spawnedAt = performance.timeOrigin + performance.now();
    const run = await runPi({
      home: home.home,
      cwd: home.cwd,
      faux: false,
      extensions,
      args: ["--provider", "benchfaux", "--model", "faux-1", "-p", "hi"],
      env: { BENCH_FIRST_REQUEST: out },
      timeoutMs: 60_000,
    });
    if (run.code !== 0 || !run.stdout.includes("ok"))
      throw new Error(`pi -p hi failed (${variant}): code ${run.code}\n${run.stderr.slice(-2000)}`);
    const firstAt = Number(await readFile(out, "utf8"));
    return { firstRequest: firstAt - spawnedAt, exit: run.durationMs };
  } finally {
    await home.cleanup();
  }
}

export async function startup({ rounds = 5, servers = 10, delayMs = 2_000 } = {}): Promise<BenchResult> {
  const variants: Variant[] = ["without pi-mcp", "pi-mcp, no servers", "pi-mcp, 10 slow servers"];
  // Warm-up: file caches and jiti's first compile are not what is measured.
  for (const variant of variants) await runOnce(variant, servers, delayMs);
  const samples = new Map<Variant, Sample[]>(variants.map((variant) => [variant, []]));
  for (let i = 0; i < rounds; i++) {
    const order = i % 2 === 0 ? variants : [...variants].reverse();
    for (const variant of order) samples.get(variant)!.push(await runOnce(variant, servers, delayMs));
  }
  const first = (variant: Variant) => median(samples.get(variant)!.map((sample) => sample.firstRequest));
  const exit = (variant: Variant) => median(samples.get(variant)!.map((sample) => sample.exit));
  const base = first("without pi-mcp");
  const full = first("pi-mcp, 10 slow servers");
  // Each round ran every variant back to back: the median of the rounds' ratios is robust to drift between rounds.
  const paired = (variant: Variant, key: keyof Sample = "firstRequest") =>
    median(samples.get(variant)!.map((sample, i) => sample[key] / samples.get("without pi-mcp")![i]![key]));
  const ratio = paired("pi-mcp, 10 slow servers");
  const exitRatio = paired("pi-mcp, 10 slow servers", "exit");
  const spread = (variant: Variant) => {
    const values = samples.get(variant)!.map((sample) => sample.firstRequest);
    return `${round(Math.min(...values), 0)}–${round(Math.max(...values), 0)}`;
  };
  return {
    name: "startup",
    rows: [
      {
        bench: "3. start-up",
        metric: `pi -p hi: spawn → first model request, pi-mcp + ${servers} servers that take ${delayMs / 1000} s to start (firstRequestWaitMs 0) vs without pi-mcp; medians, ratio = median of ${rounds} paired rounds`,
        piMcp: round(full, 0),
        raw: round(base, 0),
        ratio: round(ratio, 3),
        unit: "ms",
        goal: "ratio ≤ 1.05",
        met: ratio <= 1.05,
      },
      {
        bench: "3. start-up",
        metric: "pi-mcp loaded, no servers configured (extension load cost alone)",
        piMcp: round(first("pi-mcp, no servers"), 0),
        raw: round(base, 0),
        ratio: round(paired("pi-mcp, no servers"), 3),
        unit: "ms",
      },
      {
        bench: "3. start-up",
        metric: "process wall time until exit (includes closing the still-starting servers); ratio = median of the paired rounds",
        piMcp: round(exit("pi-mcp, 10 slow servers"), 0),
        raw: round(exit("without pi-mcp"), 0),
        ratio: round(exitRatio, 2),
        unit: "ms",
        goal: "ratio ≤ 1.15",
        met: exitRatio <= 1.15,
      },
    ],
    notes: [
      ...(ratio > 1.05
        ? [
            `Start-up: pi-mcp with ten slow servers adds ${round(full - base, 0)} ms; pi-mcp with no servers at all adds ${round(first("pi-mcp, no servers") - base, 0)} ms: the cost is loading the extension, not the servers (the first model request is sent before the deferred host start spawns any server; see bench/README.md).`,
          ]
        : []),
      `Start-up ranges (min–max ms to the first request): without pi-mcp ${spread("without pi-mcp")}; pi-mcp, no servers ${spread("pi-mcp, no servers")}; pi-mcp, ${servers} slow servers ${spread("pi-mcp, 10 slow servers")}.`,
    ],
  };
}

/**
 * `pi-mcp, settings checked`: the settings passed the shape check before (as after `pi-mcp add`, or `pi-mcp list`),
 * no catalog is known. `cold`: Pi's module loader (jiti) without its transform cache, as at the first start after an
 * install or an upgrade, or once the temporary folder it keeps the cache in was emptied; `from sources`: pi-mcp's core
 * through that loader instead of its build (PI_MCP_CORE=source).
 */
interface FirstStartSetup {
  /** pi-mcp loaded (its settings in settings.json), else Pi's built-in MCP (mcp.json). */
  readonly piMcp: boolean;
  /** `pi-mcp list` runs first. */
  readonly checked?: boolean;
  readonly env?: Record<string, string>;
}
const FIRST_START_VARIANTS = {
  "pi-mcp": { piMcp: true },
  "pi-mcp, settings checked": { piMcp: true, checked: true },
  "Pi's built-in MCP": { piMcp: false },
  "pi-mcp, cold": { piMcp: true, env: { JITI_FS_CACHE: "false" } },
  "pi-mcp from sources, cold": { piMcp: true, env: { JITI_FS_CACHE: "false", PI_MCP_CORE: "source" } },
  "Pi's built-in MCP, cold": { piMcp: false, env: { JITI_FS_CACHE: "false" } },
} satisfies Record<string, FirstStartSetup>;
type FirstStartVariant = keyof typeof FIRST_START_VARIANTS;

interface FirstStartSample {
  /** Spawn → the model's first request. */
  readonly ms: number;
  /** MCP tools in that request. */
  readonly tools: number;
  /** The machine's 1-minute load average when the run began. */
  readonly load: number;
}

/** One first start (a fresh agent folder) with `servers` servers of `tools` tools each, through pi-mcp or Pi's built-in MCP. */
async function firstStartOnce(variant: FirstStartVariant, servers: number, tools: number): Promise<FirstStartSample> {
  const setup: FirstStartSetup = FIRST_START_VARIANTS[variant];
  const home = await makePiHome();
  try {
    const definitions = Object.fromEntries(
      Array.from({ length: servers }, (_, i) => [
        `srv${i}`,
        { command: NODE, args: [fixturePath("many-tools")], environment: { FIXTURE_TOOLS: String(tools), FIXTURE_PAGE_SIZE: "100" } },
      ]),
    );
    if (setup.piMcp) {
      await writeFile(join(home.agentDir, "settings.json"), JSON.stringify({ mcp: { exposure: "direct", servers: definitions } }));
      // `list` checks the settings (remembering the pass) and never connects: no catalog is known after it.
      if (setup.checked && (await piMcpInHome(home, ["list"])).code !== 0) throw new Error("pi-mcp list failed");
    } else {
      const mcpServers = Object.fromEntries(
        // `direct`: declared to the model like pi-mcp's tools (the built-in's default, codemode, declares none).
        Object.entries(definitions).map(([name, { command, args, environment }]) => [
          name,
          { command, args, env: environment, exposure: "direct" },
        ]),
      );
      await writeFile(join(home.agentDir, "mcp.json"), JSON.stringify({ mcpServers }));
    }
    const out = join(home.home, "first-request.txt");
    const toolsOut = join(home.home, "first-tools.json");
    const load = loadavg()[0]!;
    const spawnedAt = performance.timeOrigin + performance.now();
    const run = await runPi({
      home: home.home,
      cwd: home.cwd,
      faux: false,
      extensions: setup.piMcp ? [REPO_ROOT, FIRST_REQUEST] : [FIRST_REQUEST],
      args: ["--provider", "benchfaux", "--model", "faux-1", "-p", "hi"],
      env: { BENCH_FIRST_REQUEST: out, BENCH_FIRST_TOOLS: toolsOut, ...setup.env },
      timeoutMs: 60_000,
    });
    if (run.code !== 0 || !run.stdout.includes("ok"))
      throw new Error(`pi -p hi failed (${variant}): code ${run.code}\n${run.stderr.slice(-2000)}`);
    const names = JSON.parse(await readFile(toolsOut, "utf8")) as string[];
    return { ms: Number(await readFile(out, "utf8")) - spawnedAt, tools: names.filter((name) => name.startsWith("mcp__")).length, load };
  } finally {
    await home.cleanup();
  }
}

export async function firstStart({ rounds = 5, servers = 5, tools = 20 } = {}): Promise<BenchResult> {
  const variants = Object.keys(FIRST_START_VARIANTS) as FirstStartVariant[];
  for (const variant of variants) await firstStartOnce(variant, servers, tools); // warm-up: file caches, jiti's first compile
  const samples = new Map<FirstStartVariant, FirstStartSample[]>(variants.map((variant) => [variant, []]));
  for (let i = 0; i < rounds; i++) {
    const order = i % 2 === 0 ? variants : [...variants].reverse();
    for (const variant of order) samples.get(variant)!.push(await firstStartOnce(variant, servers, tools));
  }
  const of = (variant: FirstStartVariant) => samples.get(variant)!;
  const loads = variants.flatMap((variant) => of(variant).map((sample) => sample.load));
  const all = servers * tools;
  const fewest = (variant: FirstStartVariant) => Math.min(...of(variant).map((sample) => sample.tools));
  const ms = (variant: FirstStartVariant) => median(of(variant).map((sample) => sample.ms));
  const ratioOf = (variant: FirstStartVariant, against: FirstStartVariant = "Pi's built-in MCP") =>
    median(of(variant).map((sample, i) => sample.ms / of(against)[i]!.ms));
  const ratio = ratioOf("pi-mcp");
  const spread = (variant: FirstStartVariant) => {
    const values = of(variant).map((sample) => sample.ms);
    return `${round(Math.min(...values), 0)}–${round(Math.max(...values), 0)}`;
  };
  return {
    name: "first-start",
    rows: [
      {
        bench: "3b. first start",
        metric: `pi -p hi, ${servers} servers of ${tools} tools, fresh agent folder (no known catalog): MCP tools in the first model request, fewest of ${rounds} runs, pi-mcp vs Pi's built-in MCP (mcp.json, direct exposure, pi-mcp not loaded)`,
        piMcp: fewest("pi-mcp"),
        raw: fewest("Pi's built-in MCP"),
        unit: "tools",
        goal: `all ${all}`,
        met: fewest("pi-mcp") === all,
      },
      {
        bench: "3b. first start",
        metric: `the same runs: spawn → first model request (pi-mcp loads its core and starts the servers, then gives each up to firstRequestWaitMs, 5 s, from its start; the built-in waits up to 10 s for direct servers); medians, ratio = median of ${rounds} paired rounds`,
        piMcp: round(ms("pi-mcp"), 0),
        raw: round(ms("Pi's built-in MCP"), 0),
        ratio: round(ratio, 3),
        unit: "ms",
      },
      {
        bench: "3b. first start",
        metric: `the same with settings that passed the shape check before (as after pi-mcp add; pi-mcp list run first, no catalog known): spawn → first model request (all ${all} tools in it: ${fewest("pi-mcp, settings checked") === all ? "yes" : "no"})`,
        piMcp: round(ms("pi-mcp, settings checked"), 0),
        raw: round(ms("Pi's built-in MCP"), 0),
        ratio: round(ratioOf("pi-mcp, settings checked"), 3),
        unit: "ms",
      },
      ...(["pi-mcp, cold", "pi-mcp from sources, cold"] as const).map((variant) => ({
        bench: "3b. first start",
        metric: `the same with Pi's module loader cache cold (JITI_FS_CACHE=false, as after an install, an upgrade or an emptied temporary folder; the built-in cold too)${variant === "pi-mcp, cold" ? ", pi-mcp's built core" : ", pi-mcp's core from its sources (PI_MCP_CORE=source)"}: spawn → first model request (all ${all} tools in it: ${fewest(variant) === all ? "yes" : "no"})`,
        piMcp: round(ms(variant), 0),
        raw: round(ms("Pi's built-in MCP, cold"), 0),
        ratio: round(ratioOf(variant, "Pi's built-in MCP, cold"), 3),
        unit: "ms",
      })),
    ],
    notes: [
      `First start ranges (min–max ms to the first request): pi-mcp ${spread("pi-mcp")}; settings checked before ${spread("pi-mcp, settings checked")}; Pi's built-in MCP ${spread("Pi's built-in MCP")}; MCP tools in the first request per run: pi-mcp ${of(
        "pi-mcp",
      )
        .map((sample) => sample.tools)
        .join(", ")}; built-in ${of("Pi's built-in MCP")
        .map((sample) => sample.tools)
        .join(", ")}; 1-minute load average when each run began: ${round(Math.min(...loads), 1)}–${round(Math.max(...loads), 1)}.`,
    ],
  };
}
