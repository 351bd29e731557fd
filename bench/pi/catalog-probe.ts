/**
 * Bench-only Pi extension for the catalog benchmark. `/bench-catalog` waits
 * until the expected tools are registered, then writes timings (ms since the
 * session started) as JSON to BENCH_OUT.
 *   BENCH_MODE=floor  registers BENCH_TOOLS trivial tools itself, one by one,
 *                     right after session_start (Pi's own registration cost);
 *   BENCH_MODE=pi-mcp waits for BENCH_TOOLS `mcp__*` tools from pi-mcp.
 */
import { writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export default function catalogProbe(pi: ExtensionAPI): void {
  const mode = process.env.BENCH_MODE ?? "pi-mcp";
  const expected = Number(process.env.BENCH_TOOLS ?? 5000);
  let started = 0;
  let resolveDone!: (ms: number) => void;
  const done = new Promise<number>((resolve) => (resolveDone = resolve));

  pi.on("session_start", () => {
    started = performance.now();
    if (mode === "floor") {
      setTimeout(() => {
        for (let i = 0; i < expected; i++) {
          pi.registerTool({
            name: `floor_t${i}`,
            label: `floor: t${i}`,
            description: `Tool number ${i}; answers its name.`,
            parameters: { type: "object" } as never,
            execute: async () => ({ content: [{ type: "text", text: `t${i}` }], details: {} }),
          });
        }
        resolveDone(performance.now());
      }, 0);
      return;
    }
    const poll = setInterval(() => {
      const count = pi.getAllTools().filter((tool) => tool.name.startsWith("mcp__")).length;
      if (count >= expected) {
        clearInterval(poll);
        resolveDone(performance.now());
      }
    }, 10);
  });

  pi.registerCommand("bench-catalog", {
    description: "Wait for the benchmark's tools, then write the timing",
    handler: async () => {
      const at = await done;
      // `at`: the epoch time all tools were there (for spawn-relative figures: pi-mcp registers known tools before session_start).
      writeFileSync(
        process.env.BENCH_OUT!,
        JSON.stringify({ mode, tools: expected, ms: at - started, at: performance.timeOrigin + at, active: pi.getActiveTools().length }),
      );
    },
  });
}
