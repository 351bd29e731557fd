/*
 * MCP sampling (`sampling/createMessage`), answered with Pi's active model.
 *
 * - The capability (`sampling: { tools: {} }`) is declared only where the host
 *   has a ModelService; without one the client declares nothing and registers
 *   no handler, so servers see a client without sampling.
 * - A request is served only during a tool call on that connection (the call
 *   that caused it): sampling from background work is refused, so a server
 *   cannot spend the person's model budget on its own.
 * - One model request, never an agent turn. It ends when the server cancels,
 *   when the tool call ends (answered, stopped, or past its deadline), or at
 *   the server's request timeout. One tool call may make at most
 *   MAX_SAMPLING_PER_CALL of them; later ones are refused.
 * - A request that offers tools gets the model's tool-use blocks back
 *   (`stopReason: "toolUse"`) for the server to run.
 * - Content goes to the model as the server sent it, except images the
 *   model cannot take (another type, not base64, not the image they claim,
 *   too large, more than MAX_IMAGES_PER_MESSAGE): each becomes a line saying
 *   why, instead of a request the provider refuses. The retained log gets one
 *   line per request, without content.
 */
import { ProtocolError, ProtocolErrorCode, SdkError, SdkErrorCode } from "@modelcontextprotocol/client";
import { describeError } from "../../src/kernel/errors.ts";
import type { Kernel, KernelPlugin } from "../../src/kernel/kernel.ts";
import { MAX_CONVERSATION_IMAGE_BYTES, MAX_IMAGES_PER_MESSAGE, MAX_SAMPLING_PER_CALL } from "../../src/kernel/limits.ts";
import type { CallScope, ModelService, SamplingContent, SamplingRequest, SamplingResult } from "../../src/kernel/services.ts";
import type { LiveConnection } from "../../src/kernel/types.ts";
import { safeText } from "../../src/safety/text.ts";
import { isRecord } from "../../src/safety/keys.ts";
import { imageLabel, inspectImage } from "../../src/safety/images.ts";

/** Refusal code MCP uses for "the user rejected the sampling request". */
const SAMPLING_REFUSED = -1;

/** How many sampling requests each tool call has made (capped at MAX_SAMPLING_PER_CALL). */
const samplingMade = new WeakMap<CallScope, number>();

export class SamplingPlugin implements KernelPlugin {
  readonly name = "sampling";

  apply(kernel: Kernel): void {
    kernel.hooks.clientCapabilities.tap(this.name, (capabilities, connection) =>
      connection.host.services.model ? { ...capabilities, sampling: { ...capabilities.sampling, tools: {} } } : capabilities,
    );
    kernel.hooks.clientCreated.tap(this.name, (connection) => {
      const model = connection.host.services.model;
      if (!model) return;
      try {
        connection.client.setRequestHandler(
          "sampling/createMessage",
          (request, ctx) => answerSampling(connection, model, request.params as unknown as WireParams, ctx.mcpReq.signal) as never,
        );
      } catch (error) {
        // Another plugin took the capability away again: then there is nothing to answer.
        if (error instanceof SdkError && error.code === SdkErrorCode.CapabilityNotSupported) return;
        throw error;
      }
    });
  }
}

/** The parts of `sampling/createMessage` params the host reads (the SDK has validated their shape). */
interface WireParams {
  readonly messages: readonly { readonly role: "user" | "assistant"; readonly content: WireBlock | readonly WireBlock[] }[];
  readonly systemPrompt?: string;
  readonly maxTokens: number;
  readonly temperature?: number;
  readonly stopSequences?: readonly string[];
  readonly tools?: readonly { readonly name: string; readonly description?: string; readonly inputSchema: Record<string, unknown> }[];
  readonly toolChoice?: { readonly mode?: "auto" | "required" | "none" };
}

type WireBlock = Readonly<Record<string, unknown>> & { readonly type: string };

async function answerSampling(
  connection: LiveConnection,
  model: ModelService,
  params: WireParams,
  requestSignal: AbortSignal | undefined,
): Promise<Record<string, unknown>> {
  const call = connection.activeCall();
  if (!call || !connection.isCurrent()) {
    connection.log("[pi-mcp] sampling refused: the server asked outside a tool call\n");
    throw new ProtocolError(SAMPLING_REFUSED, "sampling is only available while a tool call from this client is in progress");
  }
  const made = samplingMade.get(call) ?? 0;
  if (made >= MAX_SAMPLING_PER_CALL) {
    connection.log(
      `[pi-mcp] sampling refused: this tool call already made ${MAX_SAMPLING_PER_CALL} sampling requests, the most one call may make\n`,
    );
    throw new ProtocolError(
      SAMPLING_REFUSED,
      `sampling refused: one tool call may make at most ${MAX_SAMPLING_PER_CALL} sampling requests`,
    );
  }
  samplingMade.set(call, made + 1);
  const timeoutMs = connection.requestTimeoutMs;
  const signal = AbortSignal.any(
    [requestSignal, AbortSignal.timeout(timeoutMs), call.signal].filter((each): each is AbortSignal => each !== undefined),
  );
  const request = toSamplingRequest(params);
  const started = Date.now();
  try {
    const result = await model.complete(request, signal);
    connection.log(
      `[pi-mcp] sampling: ${safeText(result.model, connection.host.redact)} answered in ${Date.now() - started} ms (${result.stopReason})\n`,
    );
    return toWireResult(result, (params.tools?.length ?? 0) > 0);
  } catch (error) {
    const why = requestSignal?.aborted
      ? "cancelled by the server"
      : call.signal?.aborted
        ? "the tool call it belongs to ended (finished, stopped or past its deadline)"
        : signal.aborted
          ? `timed out after ${timeoutMs} ms`
          : safeText(describeError(error), connection.host.redact);
    connection.log(`[pi-mcp] sampling failed: ${why}\n`);
    throw new ProtocolError(ProtocolErrorCode.InternalError, `sampling failed: ${why}`);
  }
}

/** MCP params → the host's SamplingRequest. Audio and resource blocks reach the model as a short text note. */
export function toSamplingRequest(params: WireParams): SamplingRequest {
  const noTools = params.toolChoice?.mode === "none";
  const images = imageRoom();
  const messages = params.messages.map((message) => ({
    role: message.role,
    content: (Array.isArray(message.content) ? message.content : [message.content as WireBlock]).map((block) => toContent(block, images)),
  }));
  const usesTools = messages.some((message) => message.content.some((block) => block.type === "tool_use" || block.type === "tool_result"));
  // toolChoice "none": the model gets no tools, unless the conversation already used them (providers need their definitions then).
  const tools = params.tools && params.tools.length > 0 && (!noTools || usesTools) ? params.tools : undefined;
  return {
    ...(params.systemPrompt !== undefined && { systemPrompt: params.systemPrompt }),
    messages,
    maxTokens: params.maxTokens,
    ...(params.temperature !== undefined && { temperature: params.temperature }),
    ...(params.stopSequences && params.stopSequences.length > 0 && { stopSequences: params.stopSequences }),
    ...(tools && {
      tools: tools.map((tool) => ({
        name: tool.name,
        ...(tool.description !== undefined && { description: tool.description }),
        inputSchema: tool.inputSchema,
      })),
    }),
  };
}

/** What is left of one request's room for images: MAX_IMAGES_PER_MESSAGE of them, MAX_CONVERSATION_IMAGE_BYTES together. */
function imageRoom() {
  let count = MAX_IMAGES_PER_MESSAGE;
  let bytes = MAX_CONVERSATION_IMAGE_BYTES;
  return (data: string, mimeType: string): SamplingContent => {
    const verdict = inspectImage(data, mimeType);
    const why = !verdict.ok
      ? verdict.why
      : count <= 0
        ? `the request already holds ${MAX_IMAGES_PER_MESSAGE} images, the most one may carry`
        : verdict.data.length > bytes
          ? "the request's images would be too large together"
          : undefined;
    if (why !== undefined || !verdict.ok) return { type: "text", text: `[image ${imageLabel(mimeType)} omitted: ${why}]` };
    count--;
    bytes -= verdict.data.length;
    return { type: "image", data: verdict.data, mimeType: verdict.mimeType };
  };
}

function toContent(block: WireBlock, image: (data: string, mimeType: string) => SamplingContent): SamplingContent {
  switch (block.type) {
    case "text":
      return { type: "text", text: String(block.text ?? "") };
    case "image":
      return image(String(block.data ?? ""), String(block.mimeType ?? ""));
    case "tool_use":
      return { type: "tool_use", id: String(block.id), name: String(block.name), input: isRecord(block.input) ? block.input : {} };
    case "tool_result": {
      const inner = Array.isArray(block.content) ? (block.content as WireBlock[]) : [];
      return {
        type: "tool_result",
        toolUseId: String(block.toolUseId),
        content: inner.map((each) => toContent(each, image)),
        ...(block.isError === true && { isError: true }),
      };
    }
    case "audio":
      return { type: "text", text: `[audio ${String(block.mimeType ?? "")} omitted: the model takes no audio]` };
    default:
      return { type: "text", text: JSON.stringify(block) };
  }
}

/**
 * The SamplingResult as MCP's result. Without tools the result holds one
 * content block (the 2025 shape every server accepts): the text joined.
 */
export function toWireResult(result: SamplingResult, withTools: boolean): Record<string, unknown> {
  if (withTools) {
    const content = result.content.flatMap((block): Record<string, unknown>[] => {
      if (block.type === "text") return [{ type: "text", text: block.text }];
      if (block.type === "tool_use") return [{ type: "tool_use", id: block.id, name: block.name, input: block.input }];
      if (block.type === "image") return [{ type: "image", data: block.data, mimeType: block.mimeType }];
      return [];
    });
    return {
      role: "assistant",
      model: result.model,
      stopReason: result.stopReason,
      content: content.length > 0 ? content : [{ type: "text", text: "" }],
    };
  }
  const image = result.content.find((block) => block.type === "image");
  const text = result.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("");
  const stopReason = result.stopReason === "toolUse" ? "endTurn" : result.stopReason;
  const content = text === "" && image ? { type: "image", data: image.data, mimeType: image.mimeType } : { type: "text", text };
  return { role: "assistant", model: result.model, stopReason, content };
}
