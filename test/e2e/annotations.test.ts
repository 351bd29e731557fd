// Tool annotations are the server's unverified claims: readOnlyHint,
// destructiveHint and the others (true, false, or nonsense) change nothing
// about how pi-mcp registers, validates and runs a tool, ask no question, and
// grant nothing a permission extension refused.
import { join } from "node:path";
import { expect, it } from "vitest";
import { fixtureEvents, fixturePath } from "../helpers/servers.ts";
import { mcpInRpc, NODE, REPO_ROOT, startPiRpc, usePiHome, type FauxStep } from "./harness/pi.ts";

const PERMISSION_PROBE = join(REPO_ROOT, "test/e2e/fixtures/permission-probe.ts");
const TOOLS = ["plain", "readonly", "destructive", "odd"].map((name) => `mcp__ann__${name}`);
const home = usePiHome();

/** The tool results the model got back in the request after `seq`. */
function resultsIn(request: { messages: any[] } | undefined): { toolName: string; isError: boolean; text: string }[] {
  const results: any[] = [];
  for (const message of [...(request?.messages ?? [])].reverse()) {
    if (message.role !== "toolResult") break;
    results.unshift(message);
  }
  return results.map((result) => ({
    toolName: result.toolName,
    isError: result.isError === true,
    text: result.content.map((part: any) => part.text ?? "").join(""),
  }));
}

it("annotations change no registration, no validation, no execution and no permission", async () => {
  const events = join(home.home, "events.jsonl");
  await home.writeSettings({
    mcp: { servers: { ann: { command: NODE, args: [fixturePath("annotated")], environment: { FIXTURE_EVENTS: events } } } },
  });
  const every = (args: Record<string, unknown>): FauxStep => ({ toolCalls: TOOLS.map((name) => ({ name, arguments: args })) });
  const script: FauxStep[] = [
    every({ text: "go" }),
    { text: "ran" },
    every({}),
    { text: "refused" },
    every({ text: "forbidden" }),
    { text: "blocked" },
  ];
  const rpc = await startPiRpc({ home: home.home, cwd: home.cwd, extensions: [REPO_ROOT, PERMISSION_PROBE], script });
  try {
    expect(await mcpInRpc(rpc, "wait")).toContain("ann: connected, 4 tools");

    // Registered alike: the same description, schema, exposure and activity; the claims ride along as claims.
    const { records } = await rpc.prompt("/probe_tools");
    const held = JSON.parse(records.find((record) => record.method === "notify").message) as {
      name: string;
      annotations: unknown;
      active: boolean;
      rest: unknown;
    }[];
    expect(held.map((tool) => tool.name).sort()).toEqual([...TOOLS].sort());
    const plain = held.find((tool) => tool.name === "mcp__ann__plain")!;
    for (const tool of held) {
      expect(tool.rest, tool.name).toEqual(plain.rest);
      expect(tool.active, tool.name).toBe(true);
    }
    expect(held.find((tool) => tool.name === "mcp__ann__odd")!.annotations).toBeNull(); // nothing but real booleans is passed on
    expect(held.find((tool) => tool.name === "mcp__ann__readonly")!.annotations).toEqual({
      readOnlyHint: true,
      idempotentHint: true,
      openWorldHint: false,
    });

    // Run alike, with no question asked (a destructive hint is no reason for a dialog).
    const ran = await rpc.prompt("run them all", { timeoutMs: 30_000 });
    expect(resultsIn(rpc.requests()[1])).toEqual(
      TOOLS.map((name) => ({ toolName: name, isError: false, text: `${name.slice("mcp__ann__".length)} ran with go` })),
    );
    expect(
      ran.records.filter((record) => record.type === "extension_ui_request" && record.method !== "notify" && record.method !== "setStatus"),
    ).toEqual([]);

    // Validated alike: a read-only claim does not skip the input schema.
    await rpc.prompt("run them without text", { timeoutMs: 30_000 });
    const invalid = resultsIn(rpc.requests()[3]);
    expect(invalid.map((result) => result.toolName)).toEqual(TOOLS);
    for (const result of invalid) expect(result.isError, result.toolName).toBe(true);
    expect(new Set(invalid.map((result) => result.text.replace(/mcp__ann__\w+|plain|readonly|destructive|odd/g, "TOOL"))).size).toBe(1);

    // A permission extension's refusal stands for every tool, whatever it claims.
    await rpc.prompt("run them forbidden", { timeoutMs: 30_000 });
    const blocked = resultsIn(rpc.requests()[5]);
    expect(blocked.map((result) => result.toolName)).toEqual(TOOLS);
    for (const result of blocked) {
      expect(result.isError, result.toolName).toBe(true);
      expect(result.text).toContain("the permission extension refuses this call");
    }
    // The server ran exactly the four valid calls.
    expect((await fixtureEvents(events)).map((event) => event.tool).sort()).toEqual(["destructive", "odd", "plain", "readonly"]);
  } finally {
    await rpc.close();
  }
}, 90_000);
