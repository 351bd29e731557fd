// An agent run keeps the Instruction Snapshot taken at its start for every
// request of its tool loop, even when a server with instructions connects in
// the middle of it (its tools may arrive at once); the next agent start
// takes a fresh snapshot. Two starts: a snapshot with MCP guidance (pi-mcp
// replaces the run's system prompt, and Pi holds that text for the run), and
// one without (pi-mcp leaves the prompt as it is and Pi builds it again for
// each request, so a guidance pi-mcp added mid-run would show there).
import { join } from "node:path";
import { writeFile } from "node:fs/promises";
import { expect, it } from "vitest";
import { fixturePath } from "../helpers/servers.ts";
import { mcpInRpc, NODE, REPO_ROOT, startPiRpc, usePiHome, type FauxLogEntry, type PiVersion } from "./harness/pi.ts";

const SNAPSHOT_PROBE = join(REPO_ROOT, "test/e2e/fixtures/snapshot-probe.ts");
const LATE_GUIDANCE = "Late server guidance.";
const home = usePiHome();

/**
 * Two runs in one Pi: the first starts with `early` connected and `late` still starting; the
 * model opens late's gate, then waits for late's tool. Returns the requests of each run.
 */
async function runsAcrossLateConnect(
  version: PiVersion,
  earlyGuidance: string | undefined,
): Promise<{ run: FauxLogEntry[]; next: FauxLogEntry }> {
  const gate = join(home.home, "late-may-start");
  const late = join(home.home, "late.txt");
  await writeFile(late, LATE_GUIDANCE);
  const early = join(home.home, "early.txt");
  if (earlyGuidance !== undefined) await writeFile(early, earlyGuidance);
  await home.writeSettings({
    mcp: {
      connectTimeoutMs: 60_000,
      servers: {
        early: {
          command: NODE,
          args: [fixturePath("witness")],
          environment: earlyGuidance === undefined ? {} : { FIXTURE_INSTRUCTIONS_FILE: early },
        },
        // Connects only once the model, in the middle of the first run, opens its gate.
        late: { command: NODE, args: [fixturePath("witness")], environment: { FIXTURE_INSTRUCTIONS_FILE: late, FIXTURE_START_GATE: gate } },
      },
    },
  });
  const script = [
    { toolCall: { name: "probe_touch", arguments: { path: gate } } },
    { toolCall: { name: "probe_wait_tool", arguments: { name: "mcp__late__count" } } },
    { text: "first run done" },
    { text: "second run done" },
  ];
  const rpc = await startPiRpc({ version, home: home.home, cwd: home.cwd, extensions: [REPO_ROOT, SNAPSHOT_PROBE], script });
  try {
    let status = "";
    for (let deadline = Date.now() + 30_000; !/^early: connected/m.test(status) && Date.now() < deadline; )
      status = await mcpInRpc(rpc, "status");
    expect(status).toMatch(/^early: connected/m);
    expect(status).toMatch(/^late: connecting/m);
    await rpc.prompt("first", { timeoutMs: 60_000 });
    const run = rpc.requests();
    await rpc.prompt("second", { timeoutMs: 30_000 });
    return { run, next: rpc.requests()[run.length]! };
  } finally {
    await rpc.close();
  }
}

/** The late server's tools reached Pi during the run (the last request declares them), not before. */
function expectLateToolsArrivedMidRun(run: FauxLogEntry[]): void {
  expect(run).toHaveLength(3);
  expect(run[0]!.toolNames).not.toContain("mcp__late__count");
  expect(run[2]!.toolNames).toContain("mcp__late__count");
}

/** No request of the run carries the late server's guidance: not in its system prompt, not in a message. */
function expectNoLateGuidanceIn(run: FauxLogEntry[]): void {
  for (const [index, request] of run.entries()) {
    expect(request.systemPrompt, `request ${index}`).not.toContain(LATE_GUIDANCE);
    expect(JSON.stringify(request.messages), `request ${index}`).not.toContain(LATE_GUIDANCE);
  }
}

it.each<PiVersion>(["1.6", "0.84"])(
  "every request of one run carries the snapshot taken at its start; the next run's snapshot has the server that connected meanwhile (Pi %s)",
  async (version) => {
    const { run, next } = await runsAcrossLateConnect(version, "Early server guidance.");
    expectLateToolsArrivedMidRun(run);
    // ... but the system prompt stayed the one of the run's start.
    expect(run[0]!.systemPrompt).toContain("Early server guidance.");
    expectNoLateGuidanceIn(run);
    expect(run[1]!.systemPrompt).toBe(run[0]!.systemPrompt);
    expect(run[2]!.systemPrompt).toBe(run[0]!.systemPrompt);

    expect(next.systemPrompt).toContain("Early server guidance.");
    expect(next.systemPrompt).toContain(`## MCP server "late"\n\n${LATE_GUIDANCE}`);
  },
  120_000,
);

it.each<PiVersion>(["1.6", "0.84"])(
  "a run whose snapshot had no MCP guidance gets none in any of its requests when a server with instructions connects during it; the next run has it (Pi %s)",
  async (version) => {
    const { run, next } = await runsAcrossLateConnect(version, undefined);
    expectLateToolsArrivedMidRun(run);
    expect(run[0]!.systemPrompt).not.toContain("Instructions from MCP servers"); // pi-mcp left the prompt as it was
    expectNoLateGuidanceIn(run);
    expect(run[1]!.systemPrompt).toBe(run[0]!.systemPrompt);
    expect(run[2]!.systemPrompt).toBe(run[0]!.systemPrompt);
    expect(next.systemPrompt).toContain(`## MCP server "late"\n\n${LATE_GUIDANCE}`);
  },
  120_000,
);
