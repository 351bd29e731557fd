/**
 * Bench-only Pi extension: a faux model provider `benchfaux` / `faux-1` that
 * answers every request with "ok" and, on the first request, writes the
 * wall-clock time (epoch ms, sub-millisecond) to BENCH_FIRST_REQUEST, and
 * the names of the tools it declares (a JSON array) to BENCH_FIRST_TOOLS.
 * Run: pi -e bench/pi/first-request.ts --provider benchfaux --model faux-1 -p hi
 */
import { writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import * as ai from "@earendil-works/pi-ai";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { registerBenchModel } from "./faux-model.ts";

let written = false;

/** The tools a request declares: 1.x carries them in its system messages, 0.84 on the context. */
function toolNames(context: unknown): string[] {
  const { messages = [], tools = [] } = context as { messages?: { role: string }[]; tools?: { name: string }[] };
  const current = (ai as unknown as { getCurrentTools?: (messages: unknown[]) => { name: string }[] }).getCurrentTools;
  const declared = current && messages.some((message) => message.role === "system") ? current(messages) : tools;
  return declared.map((tool) => tool.name);
}

export default function firstRequest(pi: ExtensionAPI): void {
  registerBenchModel(pi, "benchfaux", () => ai.fauxAssistantMessage("ok"), {
    onRequest: (context) => {
      if (written || !process.env.BENCH_FIRST_REQUEST) return;
      written = true;
      writeFileSync(process.env.BENCH_FIRST_REQUEST, String(performance.timeOrigin + performance.now()));
      if (process.env.BENCH_FIRST_TOOLS) writeFileSync(process.env.BENCH_FIRST_TOOLS, JSON.stringify(toolNames(context)));
    },
  });
}
