/**
 * 3. Start-up: a real `pi -p hi` (Pi 1.6, offline faux model) with pi-mcp and
 * ten configured stdio servers that each take 2 s to start, versus the same
 * run without pi-mcp. Measured: time from spawning Pi until the model receives
 * its first request (written by bench/pi/first-request.ts). A third variant,
 * pi-mcp with no servers, separates loading the extension from starting servers.
 * Variants run interleaved, round by round.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { makePiHome, NODE, REPO_ROOT, runPi } from "../test/e2e/harness/pi.ts";
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
    // The same settings file in every variant (Pi itself ignores the `mcp` key).
    await writeFile(join(home.agentDir, "settings.json"), JSON.stringify({ mcp: { servers: slow } }));
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
    if (run.code !== 0 || !run.stdout.includes("ok")) throw new Error(`pi -p hi failed (${variant}): code ${run.code}\n${run.stderr.slice(-2000)}`);
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
        metric: `pi -p hi: spawn → first model request, pi-mcp + ${servers} servers that take ${delayMs / 1000} s to start vs without pi-mcp; medians, ratio = median of ${rounds} paired rounds`,
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
