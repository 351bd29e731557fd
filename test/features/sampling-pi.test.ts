/*
 * Sampling in a real Pi (print mode, the scripted faux model, offline): a server's
 * sampling/createMessage is answered by Pi's active model through
 * ctx.modelRegistry, as one model request between the agent's turns, and the
 * answer reaches the tool result the model then sees.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { callThenRepeat, usePiHome, NODE, PI_VERSIONS, REPO_ROOT, runPiWithMcp, type FauxStep } from "../e2e/harness/pi.ts";

const EVERYTHING = join(REPO_ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const INTERACTIVE = join(REPO_ROOT, "test/fixtures/servers/interactive.mjs");

const home = usePiHome();

const writeServers = (servers: Record<string, unknown>) => home.writeSettings({ mcp: { servers } });

describe.each(PI_VERSIONS)("sampling in a real Pi %s", (version) => {
  it("answers server-everything's trigger-sampling-request with Pi's model; the answer reaches the next turn", async () => {
    await writeServers({ everything: { command: NODE, args: [EVERYTHING, "stdio"] } });
    const [call, repeat] = callThenRepeat("mcp__everything__trigger-sampling-request", { prompt: "name a colour", maxTokens: 64 });
    const run = await runPiWithMcp(home, "please sample", [call!, { text: "SAMPLED: cerulean" }, repeat!], { version, timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    // Three model requests: the agent's turn, the sampling request, the agent's next turn. No extra turn.
    expect(run.requests).toHaveLength(3);
    const [, sampling, next] = run.requests;
    expect(sampling!.systemPrompt).toBe("You are a helpful test server.");
    expect(sampling!.toolNames).toEqual([]);
    expect(sampling!.messages).toMatchObject([
      { role: "user", content: [{ type: "text", text: "Resource trigger-sampling-request context: name a colour" }] },
    ]);
    const toolResult = next!.messages.at(-1);
    expect(toolResult).toMatchObject({ role: "toolResult", toolName: "mcp__everything__trigger-sampling-request", isError: false });
    expect(JSON.stringify(toolResult.content)).toContain("SAMPLED: cerulean");
    expect(run.stdout).toContain("model saw: LLM sampling result");
    expect(run.stdout).toContain('"text": "SAMPLED: cerulean"');
    expect(run.stdout).toContain('"model": "faux-1"');
  }, 120_000);
});

describe("sampling with tools in a real Pi", () => {
  it("gives a server the faux model's tool call (stopReason toolUse), over 2026-07-28 input requests", async () => {
    await writeServers({ interactive: { command: NODE, args: [INTERACTIVE] } });
    const script: FauxStep[] = [
      { toolCall: { name: "mcp__interactive__ask_model", arguments: { prompt: "What is the weather in Paris?", withTools: true } } },
      { toolCall: { name: "get_weather", arguments: { city: "Paris" } } },
      { textFromLastToolResult: true, prefix: "server got: " },
    ];
    const run = await runPiWithMcp(home, "ask the model with tools", script, { timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(run.requests).toHaveLength(3);
    const sampling = run.requests[1]!;
    expect(sampling.toolNames).toEqual(["get_weather"]);
    expect(sampling.tools[0]).toMatchObject({ name: "get_weather", description: "The weather in a city." });
    const line = run.stdout.split("\n").find((text) => text.startsWith("server got: "));
    const result = JSON.parse(line!.slice("server got: ".length));
    expect(result).toMatchObject({
      role: "assistant",
      model: "faux-1",
      stopReason: "toolUse",
      content: [{ type: "tool_use", name: "get_weather", input: { city: "Paris" } }],
    });
    expect(typeof result.content[0].id).toBe("string");
  }, 120_000);
});
