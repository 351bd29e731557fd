/**
 * Bench-only Pi extension: a faux model provider `benchloop` / `faux-1` that
 * calls one tool over and over, each request answering the previous call's
 * result with the next call, then ends the turn with "done". The time between
 * two requests is one whole tool-call round trip through Pi (the agent loop,
 * the tool's execute, the result into the transcript, the next request).
 *
 *   BENCH_TOOL   the tool to call (`mcp__ev__echo`, `read`, ...)
 *   BENCH_ARGS   its arguments (JSON; default {})
 *   BENCH_CALLS  calls to make (default 500)
 *   BENCH_WARMUP calls left out of the figures (default 50)
 *   BENCH_OUT    where the figures are written (JSON)
 *   BENCH_HEAP_SNAPSHOT  a file to write a heap snapshot to at the end (optional)
 *
 * Memory: with `--expose-gc`, the JS heap after a full collection when the
 * warm-up calls are done and again after the last call: what the session
 * keeps per call. The process's peak RSS is read at the end.
 * Run: pi -e bench/pi/call-loop.ts --provider benchloop --model faux-1 -p go
 */
import { writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { writeHeapSnapshot } from "node:v8";
import * as ai from "@earendil-works/pi-ai";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { registerBenchModel, type FauxContext } from "./faux-model.ts";

const gc = (globalThis as { gc?: () => void }).gc;

/** The main thread's CPU time in µs (user + system); the whole process's where Node cannot tell threads apart. */
function mainThreadCpu(): number {
  const usage = (process as { threadCpuUsage?: () => NodeJS.CpuUsage }).threadCpuUsage?.() ?? process.cpuUsage();
  return usage.user + usage.system;
}

function heapAfterGc(): number {
  gc?.();
  gc?.();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.external + usage.arrayBuffers;
}

export default function callLoop(pi: ExtensionAPI): void {
  const tool = process.env.BENCH_TOOL ?? "mcp__ev__echo";
  const args = JSON.parse(process.env.BENCH_ARGS ?? "{}") as Record<string, unknown>;
  const calls = Number(process.env.BENCH_CALLS ?? 500);
  const warmup = Number(process.env.BENCH_WARMUP ?? 50);
  const at: number[] = [];
  let heapAtWarmup = 0;
  let cpuAtWarmup = mainThreadCpu();
  let failures = 0;
  let firstError: string | undefined;
  const respond = (context: FauxContext) => {
    const last = context.messages.at(-1);
    if (last?.role === "toolResult" && last.isError) {
      failures++;
      firstError ??= JSON.stringify(last.content).slice(0, 500);
    }
    const made = at.length;
    at.push(performance.now());
    if (made === warmup) {
      heapAtWarmup = heapAfterGc();
      cpuAtWarmup = mainThreadCpu();
    }
    if (made < calls) return ai.fauxAssistantMessage([ai.fauxToolCall(tool, args as never)], { stopReason: "toolUse" });
    const perCall = at.slice(warmup + 1).map((t, i) => t - at[warmup + i]!);
    const cpu = mainThreadCpu() - cpuAtWarmup;
    const heapAtEnd = heapAfterGc();
    const out = {
      tool,
      calls: calls - warmup,
      failures,
      firstError,
      perCallMs: perCall,
      totalMs: at.at(-1)! - at[warmup]!,
      // The CPU time of Pi's main thread per call: what load on the machine changes least.
      cpuPerCallMs: cpu / 1000 / (calls - warmup),
      heapAtWarmup,
      heapAtEnd,
      retainedPerCall: gc ? (heapAtEnd - heapAtWarmup) / (calls - warmup) : undefined,
      maxRssKiB: process.resourceUsage().maxRSS,
      tools: pi.getActiveTools().length,
      // The last tool result as Pi keeps it in the transcript (every request clones the whole transcript).
      lastResult: context.messages.at(-1),
    };
    if (process.env.BENCH_HEAP_SNAPSHOT) writeHeapSnapshot(process.env.BENCH_HEAP_SNAPSHOT);
    writeFileSync(process.env.BENCH_OUT!, JSON.stringify(out));
    return ai.fauxAssistantMessage("done");
  };
  // A context window no run fills: Pi never compacts during the loop.
  registerBenchModel(pi, "benchloop", respond, { contextWindow: 100_000_000 });
}
