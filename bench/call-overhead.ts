/**
 * 1. Tool-call overhead: sequential server-everything `echo` calls over stdio
 * through pi-mcp's execute path (BridgedTool.execute from a host with a
 * recording sink: argument validation, mapping, output check, spill check)
 * versus `client.callTool` on a raw SDK client in the same era. The two
 * alternate call by call (and which goes first), so drift (CPU frequency, GC,
 * other processes) hits both alike.
 */
import { performance } from "node:perf_hooks";
import { everythingStdio, startHost } from "../test/helpers/host.ts";
import { everythingPath, median, nodePath, p99, rawStdioClient, round, type BenchResult } from "./lib.ts";

export async function callOverhead({ calls = 2_000, warmup = 300 } = {}): Promise<BenchResult> {
  const raw = await rawStdioClient(nodePath(), [everythingPath(), "stdio"]);
  await raw.client.listTools();
  const h = await startHost({ everything: everythingStdio() }, { connectTimeoutMs: 15_000 });
  try {
    await h.waitForState("everything", "connected", 15_000);
    await h.waitForTools(1, { server: "everything" });
    const tool = h.sink.tools.get("mcp__everything__echo");
    if (!tool) throw new Error("no mcp__everything__echo");
    const args = { message: "benchmark" };

    const rawCall = async () => {
      const result = await raw.client.callTool({ name: "echo", arguments: args });
      if (result.isError) throw new Error("raw echo failed");
    };
    const hostCall = async () => {
      const outcome = await tool.execute(args, {});
      if (outcome.isError) throw new Error("pi-mcp echo failed");
    };
    for (let i = 0; i < warmup; i++) {
      await rawCall();
      await hostCall();
    }
    const rawTimes: number[] = [];
    const hostTimes: number[] = [];
    const timed = async (call: () => Promise<void>, into: number[]) => {
      const start = performance.now();
      await call();
      into.push(performance.now() - start);
    };
    // Call by call, alternating which side goes first, so drift and periodic work hit both alike.
    for (let i = 0; i < calls; i++) {
      if (i % 2 === 0) {
        await timed(rawCall, rawTimes);
        await timed(hostCall, hostTimes);
      } else {
        await timed(hostCall, hostTimes);
        await timed(rawCall, rawTimes);
      }
    }
    const ratio = median(hostTimes) / median(rawTimes);
    const era = raw.client.getProtocolEra();
    const hostEra = h.host.connection("everything")!.status().protocolVersion;
    return {
      name: "call-overhead",
      rows: [
        {
          bench: "1. tool-call overhead",
          metric: `echo over stdio, ${calls} sequential calls, median`,
          piMcp: round(median(hostTimes)),
          raw: round(median(rawTimes)),
          ratio: round(ratio, 2),
          unit: "ms",
          goal: "ratio ≤ 1.10",
          met: ratio <= 1.1,
        },
        {
          bench: "1. tool-call overhead",
          metric: "p99",
          piMcp: round(p99(hostTimes)),
          raw: round(p99(rawTimes)),
          ratio: round(p99(hostTimes) / p99(rawTimes), 2),
          unit: "ms",
        },
      ],
      notes: [`Call overhead: both sides negotiated the same era (raw: ${era}; pi-mcp: ${hostEra}); ${warmup} warm-up calls each, then the two sides alternate call by call.`],
    };
  } finally {
    await h.stop();
    await raw.close();
  }
}
