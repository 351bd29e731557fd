/**
 * Bench-only Pi extension: a faux model provider `benchfaux` / `faux-1` that
 * answers every request with "ok" and, on the first request, writes the
 * wall-clock time (epoch ms, sub-millisecond) to BENCH_FIRST_REQUEST.
 * Run: pi -e bench/pi/first-request.ts --provider benchfaux --model faux-1 -p hi
 */
import { writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import * as ai from "@earendil-works/pi-ai";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

let written = false;

export default function firstRequest(pi: ExtensionAPI): void {
  const core = ai.createFauxCore({ api: "benchfaux", provider: "benchfaux", models: [{ id: "faux-1", name: "Faux 1" }] });
  const streamSimple = (model: unknown, context: unknown, options?: unknown) => {
    if (!written && process.env.BENCH_FIRST_REQUEST) {
      written = true;
      writeFileSync(process.env.BENCH_FIRST_REQUEST, String(performance.timeOrigin + performance.now()));
    }
    core.appendResponses([() => ai.fauxAssistantMessage("ok")] as never);
    return core.streamSimple(model as never, context as never, options as never);
  };
  pi.registerProvider("benchfaux", {
    name: "Bench faux",
    api: "benchfaux",
    baseUrl: "http://localhost:0",
    apiKey: "faux-key",
    streamSimple: streamSimple as never,
    models: [
      {
        id: "faux-1",
        name: "Faux 1",
        reasoning: false,
        input: ["text"],
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
        contextWindow: 128000,
        maxTokens: 16384,
      },
    ],
  } as never);
}
