/**
 * How long the built `pi-mcp` program takes to start and finish a quick
 * command: `--version`, `--help`, `list` (with two servers configured) and
 * `list --json`, each a fresh Node process, interleaved round by round.
 * The first argument is the number of rounds; any further ones are the builds
 * to measure (e.g. an older checkout's dist/cli/index.mjs and this one), all
 * in the same rounds, for before/after figures (default: this checkout's).
 *
 *   node --experimental-transform-types --no-warnings bench/cli-start.ts [rounds] [dist/cli/index.mjs…]
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { median, round } from "./lib.ts";

const CLI_BIN = fileURLToPath(new URL("../dist/cli/index.mjs", import.meta.url));

const COMMANDS: readonly (readonly string[])[] = [["--version"], ["--help"], ["list"], ["list", "--json"]];

/** One run, spawn to exit (an older build's `--version` exits 1: only `list` must succeed). */
function runOnce(bin: string, args: readonly string[], env: NodeJS.ProcessEnv): number {
  const started = performance.now();
  const run = spawnSync(process.execPath, [bin, ...args], { env, encoding: "utf8" });
  const elapsed = performance.now() - started;
  if (args[0] === "list" && run.status !== 0) throw new Error(`pi-mcp ${args.join(" ")} exited ${run.status}: ${run.stderr}`);
  return elapsed;
}

function main(): void {
  const rounds = Number(process.argv[2] ?? 20);
  const builds = process.argv.length > 3 ? process.argv.slice(3) : [CLI_BIN];
  const agentDir = mkdtempSync(join(tmpdir(), "pi-mcp-cli-start-"));
  try {
    writeFileSync(
      join(agentDir, "settings.json"),
      JSON.stringify({
        mcp: { servers: { docs: { url: "https://mcp.example.com/mcp" }, local: { command: "node", args: ["server.mjs"] } } },
      }),
    );
    const env = { ...process.env, PI_CODING_AGENT_DIR: agentDir, HOME: agentDir };
    const runs = builds.flatMap((bin) => COMMANDS.map((args) => ({ bin, args, times: [] as number[] })));
    for (const run of runs) runOnce(run.bin, run.args, env); // warm-up: file caches
    // Every build and command in each round, so that the machine's drift hits all alike.
    for (let i = 0; i < rounds; i++) for (const run of runs) run.times.push(runOnce(run.bin, run.args, env));
    console.log(`| command | ${builds.join(" | ")} |\n| --- |${builds.map(() => " --- |").join("")}`);
    for (const args of COMMANDS) {
      const cells = builds.map((bin) => `${round(median(runs.find((run) => run.bin === bin && run.args === args)!.times), 1)} ms`);
      console.log(`| pi-mcp ${args.join(" ")} | ${cells.join(" | ")} |`);
    }
  } finally {
    rmSync(agentDir, { recursive: true, force: true });
  }
}

main();
