// An agent run keeps the Instruction Snapshot taken at its start for every
// request of its tool loop, even when a server with instructions connects in
// the middle of it (its tools may arrive at once); the next agent start
// takes a fresh snapshot.
import { join } from "node:path";
import { writeFile } from "node:fs/promises";
import { expect, it } from "vitest";
import { fixturePath } from "../helpers/servers.ts";
import { mcpInRpc, NODE, REPO_ROOT, startPiRpc, usePiHome, type PiVersion } from "./harness/pi.ts";

const SNAPSHOT_PROBE = join(REPO_ROOT, "test/e2e/fixtures/snapshot-probe.ts");
const home = usePiHome();

it.each<PiVersion>(["1.6", "0.84"])("every request of one run carries the snapshot taken at its start; the next run's snapshot has the server that connected meanwhile (Pi %s)", async (version) => {
  const gate = join(home.home, "late-may-start");
  const early = join(home.home, "early.txt");
  const late = join(home.home, "late.txt");
  await writeFile(early, "Early server guidance.");
  await writeFile(late, "Late server guidance.");
  await home.writeSettings({
    mcp: {
      connectTimeoutMs: 60_000,
      servers: {
        early: { command: NODE, args: [fixturePath("witness")], environment: { FIXTURE_INSTRUCTIONS_FILE: early } },
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
    for (let deadline = Date.now() + 30_000; !/^early: connected/m.test(status) && Date.now() < deadline; ) status = await mcpInRpc(rpc, "status");
    expect(status).toMatch(/^early: connected/m);
    expect(status).toMatch(/^late: connecting/m);

    await rpc.prompt("first", { timeoutMs: 60_000 });
    const run = rpc.requests();
    expect(run).toHaveLength(3);
    // The late server's tools reached Pi during the run (the last request declares them) ...
    expect(run[2]!.toolNames).toContain("mcp__late__count");
    expect(run[0]!.toolNames).not.toContain("mcp__late__count");
    // ... but the system prompt stayed the one of the run's start.
    expect(run[0]!.systemPrompt).toContain("Early server guidance.");
    expect(run[0]!.systemPrompt).not.toContain("Late server guidance.");
    expect(run[1]!.systemPrompt).toBe(run[0]!.systemPrompt);
    expect(run[2]!.systemPrompt).toBe(run[0]!.systemPrompt);

    await rpc.prompt("second", { timeoutMs: 30_000 });
    const next = rpc.requests()[3]!;
    expect(next.systemPrompt).toContain("Early server guidance.");
    expect(next.systemPrompt).toContain('## MCP server "late"\n\nLate server guidance.');
  } finally {
    await rpc.close();
  }
}, 120_000);
