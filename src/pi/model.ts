/*
 * Pi's active model as the host's ModelService: MCP sampling is answered with
 * the model and credentials the person chose in Pi, through
 * `ctx.modelRegistry.complete(...)` (Pi 0.84.2+), which authenticates every
 * provider, extension-registered ones included. It is one model request, never
 * an agent turn: nothing is added to the session.
 */
import type { Api, AssistantMessage, Context, ImageContent, Message, Model, TextContent, Tool, ToolCall } from "@earendil-works/pi-ai";
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { PiMcpError } from "../kernel/errors.ts";
import type { ModelService, SamplingContent, SamplingRequest, SamplingResult } from "../kernel/services.ts";
import { untilAborted } from "../kernel/async.ts";

/** What the service reads from Pi's extension context (live getters: the active model may change). */
export type ModelSource = Pick<ExtensionContext, "model" | "modelRegistry">;

type AnyModel = Model<Api>;
type CompleteOptions = { signal: AbortSignal; maxTokens: number; temperature?: number; onPayload?: (payload: unknown) => unknown };

/**
 * The ModelService for a Pi session, or undefined when this Pi cannot make a
 * model request for an extension (no `modelRegistry.complete`, before 0.84.2):
 * then the sampling capability is not declared at all.
 */
export function piModelService(source: ModelSource): ModelService | undefined {
  if (typeof source.modelRegistry?.complete !== "function") return undefined;
  return {
    async complete(request, signal) {
      const model = source.model;
      if (!model) throw new PiMcpError("no_model", "Pi has no model selected");
      signal.throwIfAborted();
      const complete = (context: Context, options: CompleteOptions) =>
        source.modelRegistry.complete(model, context, options as never) as Promise<AssistantMessage>;
      const message = await untilAborted(complete(toPiContext(request, model), requestOptions(request, model, signal)), signal, () =>
        abortError(signal),
      );
      if (message.stopReason === "aborted" || signal.aborted) throw abortError(signal);
      if (message.stopReason === "error")
        throw new PiMcpError("model_failed", `the model request failed: ${message.errorMessage ?? "unknown error"}`);
      return fromPiMessage(message, request, model);
    },
  };
}

/** maxTokens (within the model's own limit), temperature, and stop sequences where the provider's request has a field for them. */
function requestOptions(request: SamplingRequest, model: AnyModel, signal: AbortSignal): CompleteOptions {
  const limit = typeof model.maxTokens === "number" && model.maxTokens > 0 ? model.maxTokens : request.maxTokens;
  const stops = (request.stopSequences ?? []).filter((stop) => stop.length > 0);
  return {
    signal,
    maxTokens: Math.max(1, Math.min(request.maxTokens, limit)),
    ...(request.temperature !== undefined && { temperature: request.temperature }),
    ...(stops.length > 0 && { onPayload: (payload: unknown) => withStopSequences(String(model.api), payload, stops) }),
  };
}

/**
 * Adds stop sequences to a provider payload, for the APIs that take them
 * (within each API's documented count). Other APIs get none on the wire; the
 * answer is cut at the first stop sequence afterwards either way.
 */
export function withStopSequences(api: string, payload: unknown, stops: readonly string[]): unknown {
  if (typeof payload !== "object" || payload === null) return undefined;
  const body = payload as Record<string, unknown>;
  const nested = (key: string) => (typeof body[key] === "object" && body[key] !== null ? (body[key] as Record<string, unknown>) : {});
  switch (api) {
    case "anthropic-messages":
      return { ...body, stop_sequences: [...stops] };
    case "openai-completions":
    case "mistral-conversations":
      return { ...body, stop: stops.slice(0, 4) };
    case "google-generative-ai":
    case "google-vertex":
      return { ...body, config: { ...nested("config"), stopSequences: stops.slice(0, 5) } };
    case "bedrock-converse-stream":
      return { ...body, inferenceConfig: { ...nested("inferenceConfig"), stopSequences: stops.slice(0, 4) } };
    default:
      return undefined;
  }
}

/** The MCP conversation as pi-ai messages: tool results become toolResult messages, in order. */
function toPiContext(request: SamplingRequest, model: AnyModel): Context {
  const now = Date.now();
  const toolNames = new Map<string, string>();
  const messages: Message[] = [];
  for (const message of request.messages) {
    if (message.role === "assistant") {
      const content: AssistantMessage["content"] = [];
      for (const block of message.content) {
        if (block.type === "tool_use") {
          toolNames.set(block.id, block.name);
          content.push({ type: "toolCall", id: block.id, name: block.name, arguments: block.input as ToolCall["arguments"] });
        } else content.push({ type: "text", text: assistantText(block) });
      }
      messages.push({
        role: "assistant",
        content,
        api: model.api,
        provider: model.provider,
        model: model.id,
        usage: {
          input: 0,
          output: 0,
          cacheRead: 0,
          cacheWrite: 0,
          totalTokens: 0,
          cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
        },
        stopReason: content.some((block) => block.type === "toolCall") ? "toolUse" : "stop",
        timestamp: now,
      } as AssistantMessage);
      continue;
    }
    const parts: (TextContent | ImageContent)[] = [];
    for (const block of message.content) {
      if (block.type === "tool_result") {
        messages.push({
          role: "toolResult",
          toolCallId: block.toolUseId,
          toolName: toolNames.get(block.toolUseId) ?? "tool",
          content: block.content.map(userPart),
          isError: block.isError === true,
          timestamp: now,
        } as Message);
      } else parts.push(userPart(block));
    }
    if (parts.length > 0) messages.push({ role: "user", content: parts, timestamp: now });
  }
  const tools: Tool[] | undefined = request.tools?.map((tool) => ({
    name: tool.name,
    description: tool.description ?? "",
    parameters: tool.inputSchema,
  }));
  return {
    ...(request.systemPrompt !== undefined && request.systemPrompt !== "" && { systemPrompt: request.systemPrompt }),
    messages,
    ...(tools && tools.length > 0 && { tools }),
  };
}

function userPart(block: SamplingContent): TextContent | ImageContent {
  if (block.type === "text") return { type: "text", text: block.text };
  if (block.type === "image") return { type: "image", data: block.data, mimeType: block.mimeType };
  return { type: "text", text: JSON.stringify(block) };
}

/** pi-ai assistant messages hold text and tool calls only. */
function assistantText(block: SamplingContent): string {
  if (block.type === "text") return block.text;
  if (block.type === "image") return `[image ${block.mimeType}]`;
  return JSON.stringify(block);
}

/** The model's answer as MCP content: text, and tool-use blocks when the request offered tools. */
function fromPiMessage(message: AssistantMessage, request: SamplingRequest, model: AnyModel): SamplingResult {
  const offeredTools = (request.tools?.length ?? 0) > 0;
  const content: SamplingContent[] = [];
  for (const block of message.content) {
    if (block.type === "text") content.push({ type: "text", text: block.text });
    else if (block.type === "toolCall" && offeredTools)
      content.push({ type: "tool_use", id: block.id, name: block.name, input: { ...block.arguments } });
  }
  const calls = content.some((block) => block.type === "tool_use");
  let stopReason: SamplingResult["stopReason"] =
    calls || message.stopReason === "toolUse" ? "toolUse" : message.stopReason === "length" ? "maxTokens" : "endTurn";
  if (!calls && message.rawStopReason === "stop_sequence") stopReason = "stopSequence";
  // A provider without a stop-sequence field (or one that ignored it): cut the text at the first one.
  const stops = (request.stopSequences ?? []).filter((stop) => stop.length > 0);
  if (!calls && stops.length > 0) {
    const text = content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("");
    const cut = Math.min(...stops.map((stop) => text.indexOf(stop)).filter((index) => index !== -1));
    if (Number.isFinite(cut))
      return {
        model: message.responseModel ?? model.id,
        content: [{ type: "text", text: text.slice(0, cut) }],
        stopReason: "stopSequence",
      };
  }
  return { model: message.responseModel ?? model.id, content, stopReason };
}

function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new PiMcpError("cancelled", "the model request was cancelled");
}
