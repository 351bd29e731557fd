/**
 * Test-only Pi extension: a scripted, offline model provider `faux` with model `faux-1`.
 * Load it with `pi -e test/e2e/harness/faux-provider.ts --provider faux --model faux-1`.
 * Works on Pi 0.84.2 and 1.6.0 (both pi-ai versions export `createFauxCore`).
 *
 * Script: env `PI_MCP_FAUX_SCRIPT` names a JSON file holding an array of steps. Each model
 * request consumes the next step (requests made through `ctx.modelRegistry`, e.g. MCP
 * sampling, consume steps too). A step is one of:
 *   {"text": "reply"}                                   reply with text, end the turn
 *   {"toolCall": {"name": "t", "arguments": {...}}}     call one tool
 *   {"toolCalls": [{"name": ..., "arguments": ...}]}    call several tools in one message
 *   {"textFromLastToolResult": true, "prefix"?: "got: "} reply with (prefix +) the text of the
 *                                                       most recent tool result in the context
 *   {"error": "message"}                                fail the request with this error
 * With no script, or once it is used up, every request replies with `FAUX_EXHAUSTED`.
 * Models: `faux-1` (context window 128,000) and `faux-small` (env `PI_MCP_FAUX_SMALL_WINDOW`,
 * default 32,000), both answered from the same script; `/faux-model <id>` switches the session's
 * model (Pi's `model_select`), in print mode too.
 * The step counter lives on `globalThis`, so it survives `/reload` and `new_session` (which
 * re-run this factory) within one Pi process.
 *
 * Log: when env `PI_MCP_FAUX_LOG` is set, every request appends one JSON line:
 *   {seq, at, model, systemPrompt, toolNames, tools: [{name, description, parameters}], messages}
 * (`at`: when the request reached the model, `Date.now()`; `model`: the id of the model it was made with).
 * `messages` excludes system-role messages (1.x carries prompt and tools in them); use
 * `systemPrompt`/`tools`, which hold the effective values on both versions.
 */
import { appendFileSync, readFileSync } from "node:fs";
import * as ai from "@earendil-works/pi-ai";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export const FAUX_EXHAUSTED = "[faux] no scripted step left";

type ToolCallSpec = { name: string; arguments?: Record<string, unknown> };
export type FauxStep =
  | { text: string }
  | { toolCall: ToolCallSpec }
  | { toolCalls: ToolCallSpec[] }
  | { textFromLastToolResult: true; prefix?: string }
  | { error: string };

export interface FauxLogEntry {
  seq: number;
  /** When the request reached the model (`Date.now()`). */
  at: number;
  /** The id of the model the request was made with (`faux-1`, `faux-small`). */
  model: string;
  systemPrompt: string;
  toolNames: string[];
  tools: { name: string; description: string; parameters: unknown }[];
  messages: any[];
}

type Ctx = { systemPrompt?: string; tools?: any[]; messages: any[] };
const faux = globalThis as { [key: symbol]: { seq: number } | undefined };
const FAUX_STATE = Symbol.for("pi-mcp.test.faux");
faux[FAUX_STATE] ??= { seq: 0 };
const state = faux[FAUX_STATE];

function loadScript(): FauxStep[] {
  const file = process.env.PI_MCP_FAUX_SCRIPT;
  return file ? (JSON.parse(readFileSync(file, "utf8")) as FauxStep[]) : [];
}

/** Effective system prompt and tools: 0.84 passes them on the context, 1.x in system messages. */
function view(context: Ctx): { systemPrompt: string; tools: any[] } {
  const x = ai as any;
  if (typeof x.getCurrentSystemPrompt === "function" && context.messages.some((m) => m.role === "system")) {
    return { systemPrompt: x.getCurrentSystemPrompt(context.messages), tools: x.getCurrentTools(context.messages) };
  }
  return { systemPrompt: context.systemPrompt ?? "", tools: context.tools ?? [] };
}

function lastToolResultText(messages: any[]): string {
  const result = [...messages].reverse().find((m) => m.role === "toolResult");
  if (!result) return "[faux] no tool result in context";
  return result.content
    .filter((c: any) => c.type === "text")
    .map((c: any) => c.text)
    .join("\n");
}

function respond(step: FauxStep | undefined, context: Ctx): any {
  if (!step) return ai.fauxAssistantMessage(FAUX_EXHAUSTED);
  if ("text" in step) return ai.fauxAssistantMessage(step.text);
  if ("error" in step) return ai.fauxAssistantMessage([], { stopReason: "error", errorMessage: step.error });
  if ("textFromLastToolResult" in step) {
    return ai.fauxAssistantMessage((step.prefix ?? "") + lastToolResultText(context.messages));
  }
  const calls = "toolCall" in step ? [step.toolCall] : step.toolCalls;
  return ai.fauxAssistantMessage(
    calls.map((c) => ai.fauxToolCall(c.name, (c.arguments ?? {}) as any)),
    { stopReason: "toolUse" },
  );
}

export default function fauxProvider(pi: ExtensionAPI): void {
  const core = ai.createFauxCore({
    api: "faux",
    provider: "faux",
    models: [
      { id: "faux-1", name: "Faux 1" },
      { id: "faux-small", name: "Faux small" },
    ],
  });
  const factory = (context: Ctx, _options: unknown, _state: unknown, model?: { id: string }) => {
    const seq = state.seq++;
    const { systemPrompt, tools } = view(context);
    const logFile = process.env.PI_MCP_FAUX_LOG;
    if (logFile) {
      const entry: FauxLogEntry = {
        seq,
        at: Date.now(),
        model: model?.id ?? "faux-1",
        systemPrompt,
        toolNames: tools.map((t) => t.name),
        tools: tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
        messages: context.messages.filter((m) => m.role !== "system"),
      };
      appendFileSync(logFile, `${JSON.stringify(entry)}\n`);
    }
    return respond(loadScript()[seq], context);
  };
  // Queue the factory per request so every request (whoever makes it) runs it exactly once.
  const streamSimple = (model: any, context: any, options?: any) => {
    core.appendResponses([factory as any]);
    return core.streamSimple(model, context, options);
  };
  pi.registerProvider("faux", {
    name: "Faux",
    api: "faux",
    baseUrl: "http://localhost:0",
    apiKey: "faux-key",
    streamSimple: streamSimple as any,
    models: [
      {
        id: "faux-1",
        name: "Faux 1",
        reasoning: false,
        input: ["text", "image"],
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
        contextWindow: 128000,
        maxTokens: 16384,
      },
      {
        id: "faux-small",
        name: "Faux small",
        reasoning: false,
        input: ["text", "image"],
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
        contextWindow: Number(process.env.PI_MCP_FAUX_SMALL_WINDOW ?? 32000),
        maxTokens: 8192,
      },
    ],
  } as any);
  pi.registerCommand("faux-model", {
    description: "Switch to another faux model (test only)",
    handler: async (args: string, ctx: any) => {
      const model = ctx.modelRegistry.find("faux", args.trim());
      if (!model || !(await pi.setModel(model))) throw new Error(`no faux model ${args}`);
    },
  });
}
