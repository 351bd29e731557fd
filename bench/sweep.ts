/**
 * The session-folder sweep does not delay Pi: a real Pi 1.6 in RPC mode (offline
 * faux model, pi-mcp loaded, no servers) with no session folders versus with
 * `FOLDERS` folders older than the retention age (each holding a log and a 64 KiB
 * spill), which that start's background sweep removes. Measured from spawning
 * Pi: `/mcp wait` answered (pi-mcp's host started, the sweep begins), a first
 * prompt answered by the model (while the sweep runs), the sweep finished
 * (`.swept` written), and how long Pi takes to quit. Variants alternate, round
 * by round.
 * Run: node --experimental-transform-types --no-warnings bench/sweep.ts [rounds] [folders]
 */
import { mkdir, readdir, stat, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { makePiHome, REPO_ROOT, startPiRpc } from "../test/e2e/harness/pi.ts";
import { median, round } from "./lib.ts";

const rounds = Number(process.argv[2] ?? 5);
const FOLDERS = Number(process.argv[3] ?? 2_000);

async function seed(sessions: string, count: number): Promise<void> {
  const then = new Date(Date.now() - 40 * 24 * 60 * 60 * 1000);
  for (let i = 0; i < count; i++) {
    const folder = join(sessions, `old-${i}`);
    await mkdir(join(folder, "logs"), { recursive: true });
    await mkdir(join(folder, "spill"), { recursive: true });
    await writeFile(join(folder, "logs", "server.log"), "x".repeat(4096));
    await writeFile(join(folder, "spill", "out.txt"), "y".repeat(64 * 1024));
    for (const path of [
      join(folder, "logs", "server.log"),
      join(folder, "spill", "out.txt"),
      join(folder, "logs"),
      join(folder, "spill"),
      folder,
    ])
      await utimes(path, then, then);
  }
}

interface Sample {
  hostStarted: number;
  answered: number;
  swept: number;
  quit: number;
  removed: number;
}

async function runOnce(folders: number): Promise<Sample> {
  const home = await makePiHome();
  try {
    const sessions = join(home.agentDir, "pi-mcp", "sessions");
    await seed(sessions, folders);
    const started = performance.now();
    const rpc = await startPiRpc({ home: home.home, cwd: home.cwd, extensions: [REPO_ROOT], script: [{ text: "ok" }] });
    await rpc.prompt("/mcp wait", { timeoutMs: 120_000 });
    const hostStarted = performance.now() - started;
    await rpc.prompt("hi", { timeoutMs: 120_000 });
    const answered = performance.now() - started;
    const stamp = join(sessions, ".swept");
    while (
      !(await stat(stamp).then(
        () => true,
        () => false,
      ))
    )
      await new Promise((resolve) => setTimeout(resolve, 5));
    const swept = performance.now() - started;
    const closing = performance.now();
    await rpc.close(60_000);
    const quit = performance.now() - closing;
    const left = (await readdir(sessions)).filter((name) => name.startsWith("old-")).length;
    return { hostStarted, answered, swept, quit, removed: folders - left };
  } finally {
    await home.cleanup();
  }
}

await runOnce(0); // warm-up: file caches and jiti's first compile
const samples: Record<"none" | "old", Sample[]> = { none: [], old: [] };
for (let i = 0; i < rounds; i++) {
  const order = i % 2 === 0 ? (["none", "old"] as const) : (["old", "none"] as const);
  for (const variant of order) samples[variant].push(await runOnce(variant === "old" ? FOLDERS : 0));
}
const m = (variant: "none" | "old", key: keyof Sample) => round(median(samples[variant].map((sample) => sample[key])), 0);
const row = (variant: "none" | "old") =>
  `| ${variant === "old" ? `${FOLDERS} old folders` : "none"} | ${m(variant, "hostStarted")} | ${m(variant, "answered")} | ${m(variant, "swept")} | ${m(variant, "quit")} | ${samples[variant].map((s) => s.removed).join(", ")} |`;
const paired = (key: keyof Sample) => round(median(samples.old.map((sample, i) => sample[key] / samples.none[i]![key])), 3);
console.log(
  [
    `Pi 1.6 RPC, ${rounds} rounds, medians in ms from spawning Pi`,
    "| session folders to sweep | /mcp wait answered | first prompt answered | sweep finished | quit took | folders removed |",
    "| --- | --- | --- | --- | --- | --- |",
    row("none"),
    row("old"),
    `paired ratios (with / without): /mcp wait ${paired("hostStarted")}, first prompt ${paired("answered")}`,
  ].join("\n"),
);
