/**
 * 1. Tool-call overhead: sequential server-everything `echo` calls over stdio
 * through pi-mcp's execute path (BridgedTool.execute from a host with a
 * recording sink: argument validation, mapping, output check, spill check)
 * versus `client.callTool` on a raw SDK client in the same era, and versus
 * the MCP client of Pi's built-in MCP (`@earendil-works/pi-mcp`'s McpClient,
 * what Pi 1.6 calls a server tool with), each with its own server process.
 * The three alternate call by call (and which goes first), so drift (CPU
 * frequency, GC, other processes) hits all alike. Besides the time of a
 * call, the process's CPU time during it: what a call costs Pi's process,
 * which load on the machine changes least.
 */
import { performance } from "node:perf_hooks";
import { McpClient, StdioTransport } from "@earendil-works/pi-mcp";
import { everythingStdio, startHost } from "../test/helpers/host.ts";
import { everythingPath, median, nodePath, p99, rawStdioClient, round, type BenchResult, type Row } from "./lib.ts";

export async function callOverhead({ calls = 2_000, warmup = 300 } = {}): Promise<BenchResult> {
  const raw = await rawStdioClient(nodePath(), [everythingPath(), "stdio"]);
  await raw.client.listTools();
  const builtin = new McpClient({ name: "pi", version: "0.0.0" });
  await builtin.connect(new StdioTransport({ command: nodePath(), args: [everythingPath(), "stdio"], stderr: "pipe" }));
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
    const builtinCall = async () => {
      const result = await builtin.callTool("echo", args);
      if (result.isError) throw new Error("built-in echo failed");
    };
    for (let i = 0; i < warmup; i++) {
      await rawCall();
      await hostCall();
      await builtinCall();
    }
    const rawTimes: number[] = [];
    const hostTimes: number[] = [];
    const builtinTimes: number[] = [];
    const cpu = { host: 0, raw: 0, builtin: 0 };
    const timed = async (call: () => Promise<void>, into: number[], side: keyof typeof cpu) => {
      const usage = process.cpuUsage();
      const start = performance.now();
      await call();
      into.push(performance.now() - start);
      const spent = process.cpuUsage(usage);
      cpu[side] += spent.user + spent.system;
    };
    const sides = [
      () => timed(rawCall, rawTimes, "raw"),
      () => timed(hostCall, hostTimes, "host"),
      () => timed(builtinCall, builtinTimes, "builtin"),
    ];
    // Call by call, rotating which side goes first, so drift and periodic work hit all alike.
    for (let i = 0; i < calls; i++) for (let k = 0; k < sides.length; k++) await sides[(i + k) % sides.length]!();
    const cpuPerCall = (side: keyof typeof cpu) => cpu[side] / calls / 1000;
    /** A row of pi-mcp's figure beside another side's, in milliseconds. */
    const versus = (metric: string, mine: number, theirs: number): Row => ({
      bench: "1. tool-call overhead",
      metric,
      piMcp: round(mine),
      raw: round(theirs),
      ratio: round(mine / theirs, 2),
      unit: "ms",
    });
    const ratio = median(hostTimes) / median(rawTimes);
    const era = raw.client.getProtocolEra();
    const hostEra = h.host.server("everything")!.status().protocolVersion;
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
        versus("p99", p99(hostTimes), p99(rawTimes)),
        versus("the process's CPU time per call (same calls)", cpuPerCall("host"), cpuPerCall("raw")),
        {
          ...versus(
            "against Pi's built-in MCP client (@earendil-works/pi-mcp McpClient, same calls): median",
            median(hostTimes),
            median(builtinTimes),
          ),
          goal: "ratio ≤ 1.00",
          met: median(hostTimes) <= median(builtinTimes),
        },
        versus("against Pi's built-in MCP client: the process's CPU time per call", cpuPerCall("host"), cpuPerCall("builtin")),
      ],
      notes: [
        `Call overhead: pi-mcp and the raw SDK negotiated the same era (raw: ${era}; pi-mcp: ${hostEra}; Pi's built-in client: ${builtin.protocolVersion ?? "?"}); ${warmup} warm-up calls each, then the three sides take turns call by call.`,
      ],
    };
  } finally {
    await h.stop();
    await raw.close();
    await builtin.close();
  }
}
