/**
 * How long the built `pi-mcp` program takes to start and finish a quick
 * command: `--version`, `--help`, `list` (with two servers configured) and
 * `list --json`, each a fresh Node process, interleaved round by round.
 * The first argument is the number of rounds, the second another build to
 * measure (e.g. an older checkout's dist/cli/index.mjs), for before/after figures.
 *
 *   node --experimental-transform-types --no-warnings bench/cli-start.ts [rounds] [path/to/dist/cli/index.mjs]
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
  const bin = process.argv[3] ?? CLI_BIN;
  const agentDir = mkdtempSync(join(tmpdir(), "pi-mcp-cli-start-"));
  try {
    writeFileSync(
      join(agentDir, "settings.json"),
      JSON.stringify({ mcp: { servers: { docs: { url: "https://mcp.example.com/mcp" }, local: { command: "node", args: ["server.mjs"] } } } }),
    );
    const env = { ...process.env, PI_CODING_AGENT_DIR: agentDir, HOME: agentDir };
    for (const args of COMMANDS) runOnce(bin, args, env); // warm-up: file caches
    const samples = new Map(COMMANDS.map((args) => [args, [] as number[]]));
    for (let i = 0; i < rounds; i++) for (const args of COMMANDS) samples.get(args)!.push(runOnce(bin, args, env));
    console.log(`| command | median ms (${rounds} runs) |\n| --- | --- |`);
    for (const [args, times] of samples) console.log(`| pi-mcp ${args.join(" ")} | ${round(median(times), 1)} |`);
  } finally {
    rmSync(agentDir, { recursive: true, force: true });
  }
}

main();
