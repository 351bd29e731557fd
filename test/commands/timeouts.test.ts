/**
 * No request outlasts its deadline: a requestTimeoutMs above requestDeadlineMs
 * is cut to the deadline (the connection passes min(timeout, deadline) on
 * every request), and every place that shows a server's timeouts says so
 * instead of showing the written value as if it were in effect: `get` (text
 * and JSON, the timeouts "in effect" as the README puts it) and `/mcp status`.
 */
import { describe, expect, it } from "vitest";
import { formatStatus } from "../../src/commands/runtime.ts";
import { loadConfig } from "../../src/config/load.ts";
import type { ConnectionStatus } from "../../src/kernel/status.ts";
import { runCli, useSandbox, type Sandbox } from "../helpers/tmp.ts";

const sandbox = useSandbox();

/** `long` sets its own timeout above its own deadline; `inherits` takes a top-level timeout above the top-level deadline; `fits` is within. */
async function settings(box: Sandbox): Promise<void> {
  await box.writeJson(box.globalSettings, {
    mcp: {
      requestTimeoutMs: 900_000,
      requestDeadlineMs: 800_000,
      servers: {
        long: { url: "https://long.example/mcp", requestTimeoutMs: 700_000, requestDeadlineMs: 500_000 },
        inherits: { url: "https://inherits.example/mcp" },
        fits: { url: "https://fits.example/mcp", requestTimeoutMs: 30_000 },
      },
    },
  });
}

describe("a requestTimeoutMs above requestDeadlineMs", () => {
  it("get shows the timeout in effect and says it was cut; get --json has the timeouts in effect", async () => {
    const box = sandbox();
    await settings(box);
    const get = (...argv: string[]) => runCli(["get", ...argv], box.projectDir, box.env());
    // The timeouts field, its wrapped lines (indented further than a field's name) joined.
    const timeoutsOf = (output: string) => {
      const lines = output.split("\n");
      const start = lines.findIndex((line) => line.startsWith("  timeouts:"));
      const end = lines.findIndex((line, index) => index > start && !line.startsWith("   "));
      return lines
        .slice(start, end === -1 ? undefined : end)
        .join(" ")
        .replace(/\s+/g, " ")
        .trim();
    };
    const long = await get("long");
    expect(long.exitCode, long.output).toBe(0);
    expect(timeoutsOf(long.output)).toBe(
      "timeouts: connect 10000 ms, request 500000 ms (requestTimeoutMs 700000 is cut to the deadline), deadline 500000 ms",
    );
    const inherits = await get("inherits");
    expect(timeoutsOf(inherits.output)).toBe(
      "timeouts: connect 10000 ms, request 800000 ms (requestTimeoutMs 900000 is cut to the deadline), deadline 800000 ms",
    );
    const fits = await get("fits");
    expect(timeoutsOf(fits.output)).toBe("timeouts: connect 10000 ms, request 30000 ms, deadline 800000 ms");
    expect(((await get("long", "--json")).json as Record<string, unknown>).requestTimeoutMs).toBe(500_000);
    expect(((await get("inherits", "--json")).json as Record<string, unknown>).requestTimeoutMs).toBe(800_000);
    expect(((await get("fits", "--json")).json as Record<string, unknown>).requestTimeoutMs).toBe(30_000);
  });

  it("/mcp status says which servers' timeout is cut to their deadline", async () => {
    const box = sandbox();
    await settings(box);
    const config = await loadConfig({ agentDir: box.agentDir, cwd: box.projectDir, projectTrusted: false, env: box.env() });
    const servers = config.servers.map(
      (entry): ConnectionStatus => ({ name: entry.name, state: "connected", attempts: 0, tools: 1, exposures: {} }),
    );
    const lines = formatStatus(config, servers).split("\n");
    const lineAfter = (name: string) => lines[lines.findIndex((line) => line.startsWith(`${name}: `)) + 1] ?? "";
    expect(lineAfter("long")).toBe("  timeouts: requestTimeoutMs 700000 is cut to requestDeadlineMs 500000");
    expect(lineAfter("inherits")).toBe("  timeouts: requestTimeoutMs 900000 is cut to requestDeadlineMs 800000");
    expect(lineAfter("fits")).not.toMatch(/timeouts/);
  });
});
