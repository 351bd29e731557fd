/**
 * How a test's child process that runs our code (Pi with pi-mcp, the pi-mcp
 * CLI) reports its crashes: it preloads crash-guard.mjs, which appends every
 * uncaught exception and unhandled rejection to this worker's crash log;
 * test/setup/unhandled.ts fails the test during which one appeared. (No
 * vitest import here: the benchmarks use the same helpers.)
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const GUARD = join(import.meta.dirname, "crash-guard.mjs");

/** One crash log per test process; the children it starts append to it. */
export const CRASH_LOG = join(tmpdir(), `pi-mcp-crash-${process.pid}.jsonl`);

/** The environment additions for such a child (`env` is its own environment, whose NODE_OPTIONS are kept); none outside vitest. */
export function crashGuardEnv(env: NodeJS.ProcessEnv = {}): Record<string, string> {
  if (!process.env.VITEST) return {};
  const options = [env.NODE_OPTIONS, `--import=${pathToFileURL(GUARD).href}`].filter(Boolean).join(" ");
  return { NODE_OPTIONS: options, PI_MCP_CRASH_LOG: CRASH_LOG };
}
