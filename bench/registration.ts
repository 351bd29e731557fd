/**
 * 7. Registration: a catalog of 1,000, 6,000 and 20,000 tools (`many-tools`)
 * into a real Pi 1.6 (`pi -p /stall-report`), watched from inside Pi by the
 * stall probe (test/e2e/fixtures/stall-probe.ts): the longest stall of Pi's
 * event loop while the tools register (wall, and the main thread's CPU time
 * in that gap: on a loaded machine the wall gap also holds waiting for a
 * core) and the time they take, session start → every tool active. The
 * yardstick is Pi's floor in the same run: a bare extension registering as
 * many trivial tools one by one right after session start (after the session
 * is bound, each registration rebuilds Pi's whole registry: quadratic, and in
 * one go one block). Floor and pi-mcp alternate, count by count.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { makePiHome, NODE, REPO_ROOT, runPi } from "../test/e2e/harness/pi.ts";
import type { StallReport } from "../test/e2e/fixtures/stall-probe.ts";
import { fixturePath, round, type BenchResult, type Row } from "./lib.ts";

const PROBE = join(REPO_ROOT, "test/e2e/fixtures/stall-probe.ts");
export type RegistrationSide = "floor" | "pi-mcp" | "built-in";

/** One run of Pi with `tools` tools from `side`; the probe's report. */
/**
 * What pi-mcp kept from an earlier start with the same settings, for a second start: `checked` (the settings
 * passed the shape check: no arktype; the catalog cache off, so the tools register as on a first start) or
 * `known` (that and the known catalog).
 */
export type EarlierStart = "none" | "checked" | "known";

/** One run of Pi with `tools` tools from `side` (pi-mcp: after `earlier`, in the same agent folder); the probe's report. */
export async function registrationRun(
  side: RegistrationSide,
  tools: number,
  timeoutMs = 3_600_000,
  earlier: EarlierStart = "none",
): Promise<StallReport> {
  const home = await makePiHome();
  try {
    const many = { command: NODE, args: [fixturePath("many-tools")] };
    if (side === "pi-mcp")
      await writeFile(
        join(home.agentDir, "settings.json"),
        JSON.stringify({
          mcp: {
            connectTimeoutMs: 120_000,
            exposure: "direct",
            servers: { many: { ...many, environment: { FIXTURE_TOOLS: String(tools) } } },
          },
        }),
      );
    if (side === "built-in")
      // Pi's built-in MCP (run without pi-mcp), its tools declared to the model like pi-mcp's.
      await writeFile(
        join(home.agentDir, "mcp.json"),
        JSON.stringify({ mcpServers: { many: { ...many, env: { FIXTURE_TOOLS: String(tools) }, exposure: "direct" } } }),
      );
    const out = join(home.home, "stall.json");
    const start = async (cache: boolean) => {
      const run = await runPi({
        home: home.home,
        cwd: home.cwd,
        extensions: side === "pi-mcp" ? [REPO_ROOT, PROBE] : [PROBE],
        args: ["-p", "/stall-report"],
        env: {
          STALL_PROBE_MODE: side === "floor" ? "floor" : "watch",
          STALL_PROBE_TOOLS: String(tools),
          STALL_PROBE_OUT: out,
          ...(!cache && { PI_MCP_CATALOG_CACHE: "0" }),
        },
        timeoutMs,
      });
      if (run.code !== 0) throw new Error(`pi (${side}, ${tools} tools) failed: code ${run.code}\n${run.stderr.slice(-2000)}`);
      return JSON.parse(await readFile(out, "utf8")) as StallReport;
    };
    if (earlier !== "none") await start(true);
    return await start(earlier !== "checked");
  } finally {
    await home.cleanup();
  }
}

export async function registration({ counts = [1_000, 6_000, 20_000] } = {}): Promise<BenchResult> {
  const rows: Row[] = [];
  const notes: string[] = [];
  for (const [index, tools] of counts.entries()) {
    const order: RegistrationSide[] = index % 2 === 0 ? ["floor", "pi-mcp"] : ["pi-mcp", "floor"];
    const reports = new Map<RegistrationSide, StallReport>();
    for (const side of order) reports.set(side, await registrationRun(side, tools));
    const floor = reports.get("floor")!;
    const piMcp = reports.get("pi-mcp")!;
    rows.push(
      {
        bench: "7. registration",
        metric: `${tools} tools into a real Pi 1.6: longest event-loop stall while they register (wall; main-thread CPU in it: pi-mcp ${round(piMcp.maxStallCpuMs, 0)} ms, floor ${round(floor.maxStallCpuMs, 0)} ms)`,
        piMcp: round(piMcp.maxStallMs, 0),
        raw: round(floor.maxStallMs, 0),
        ratio: round(piMcp.maxStallMs / floor.maxStallMs, 3),
        unit: "ms",
        goal: "≤ 100 ms of work in one block",
        met: piMcp.maxBlockCpuMs <= 100,
      },
      {
        bench: "7. registration",
        metric: `${tools} tools: session start → all active (pi-mcp: spawning, listing and registering; floor: registering alone). Main-thread CPU while registering: pi-mcp ${round(piMcp.registeringCpuMs / 1000, 1)} s, floor ${round(floor.registeringCpuMs / 1000, 1)} s`,
        piMcp: round(piMcp.totalMs, 0),
        raw: round(floor.totalMs, 0),
        ratio: round(piMcp.totalMs / floor.totalMs, 2),
        unit: "ms",
      },
    );
    notes.push(
      `Registration, ${tools} tools: pi-mcp's longest block of work ${round(piMcp.maxBlockCpuMs, 0)} ms of CPU (${piMcp.stallsOver100Ms} wall gaps over 100 ms); the floor registers in one block of ${round(floor.maxBlockCpuMs / 1000, 1)} s of CPU.`,
    );
  }
  return { name: "registration", rows, notes };
}
