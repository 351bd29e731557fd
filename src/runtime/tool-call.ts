import { ANY_RESULT } from "../kernel/protocol.ts";
import type { Tool } from "@modelcontextprotocol/client";
import { PiMcpError } from "../kernel/errors.ts";
import type { ResultPipeline } from "../kernel/host.ts";
import type { ServerConnection } from "./connection.ts";
import { requestFailure } from "./errors.ts";
import type { LazySchemas } from "./schemas.ts";
import type { CallOptions, ProgressUpdate, ToolOutcome } from "../kernel/services.ts";
import { MAX_PROGRESS_MESSAGE_CHARS } from "../kernel/limits.ts";
import type { Redactor } from "../kernel/types.ts";
import { safeHead } from "../safety/text.ts";

export type { CallOptions, ProgressUpdate, ToolOutcome };

/**
 * Calls one server tool: checks the arguments against the tool's exact input
 * schema, sends the call with the configured timeout (reset by progress) and
 * Pi's abort signal, then maps, validates and limits the result.
 */
export async function callServerTool(
  results: ResultPipeline,
  schemas: LazySchemas,
  connection: ServerConnection,
  tool: Tool,
  args: Record<string, unknown>,
  options: CallOptions = {},
): Promise<ToolOutcome> {
  const label = `${connection.name}/${tool.name}`;
  const checked = checkArguments(schemas, tool, args);
  if (!checked.ok) throw new PiMcpError("failed", `${label}: ${checked.message}`);
  const raw = await sendCall(connection, tool, checked.args, options, label);
  return mapCallResult(results, schemas, connection, tool, raw);
}

/**
 * Checks arguments against the tool's exact input schema. Models often send
 * `null` for an optional parameter they mean to leave out; when only such
 * nulls break the schema, they are dropped instead of failing the call.
 */
function checkArguments(
  schemas: LazySchemas,
  tool: Tool,
  args: Record<string, unknown>,
): { ok: true; args: Record<string, unknown> } | { ok: false; message: string } {
  const first = schemas.check(tool.inputSchema, args, "arguments");
  if (first.ok) return { ok: true, args };
  const required = new Set(Array.isArray(tool.inputSchema?.required) ? tool.inputSchema.required : []);
  const withoutNulls = Object.fromEntries(Object.entries(args).filter(([key, value]) => value !== null || required.has(key)));
  if (Object.keys(withoutNulls).length === Object.keys(args).length) return first;
  return schemas.check(tool.inputSchema, withoutNulls, "arguments").ok ? { ok: true, args: withoutNulls } : first;
}

async function sendCall(
  connection: ServerConnection,
  tool: Tool,
  args: Record<string, unknown>,
  options: CallOptions,
  label: string,
): Promise<Record<string, unknown>> {
  const timeout = connection.requestTimeoutMs;
  const params = { name: tool.name, arguments: args };
  // Progress restarts the timeout; the deadline bounds the whole call (and a retry after an expired session).
  const deadline = { ms: connection.requestDeadlineMs, signal: AbortSignal.timeout(connection.requestDeadlineMs) };
  const signal = options.signal ? AbortSignal.any([options.signal, deadline.signal]) : deadline.signal;
  // Server requests that arrive during this call (elicitation, sampling) are scoped to it, and end with it.
  const ended = new AbortController();
  const leave = connection.enterCall({ signal: AbortSignal.any([signal, ended.signal]), interactive: options.interactive === true });
  const send = () => {
    const client = connection.requireClient();
    const requestOptions = {
      timeout,
      resetTimeoutOnProgress: true,
      maxTotalTimeout: deadline.ms,
      onprogress: (progress: ProgressUpdate) => options.onProgress?.(boundedProgress(progress, connection.host.redact)),
      signal,
    };
    // 2026-07-28 peers: the SDK mirrors `x-mcp-header` parameters into HTTP headers. The tool is passed
    // without its output schema, which we check ourselves (lazily, per tool) after mapping.
    if (client.getProtocolEra() === "modern") {
      const definition = { ...tool, outputSchema: undefined };
      return client.callTool(params, { ...requestOptions, toolDefinition: definition }) as Promise<Record<string, unknown>>;
    }
    // 2025-era peers: the raw result, so one odd content block cannot fail the whole call.
    return client.request({ method: "tools/call", params }, ANY_RESULT, requestOptions) as Promise<Record<string, unknown>>;
  };
  try {
    return await connection.withSessionRecovery(send);
  } catch (error) {
    throw requestFailure(label, error, { signal: options.signal, deadline, timeoutMs: timeout, redact: connection.host.redact, during: "during the call", closeCause: connection.closeCause });
  } finally {
    ended.abort();
    leave();
  }
}

/** Runs the result pipeline with the output-schema check between mapping and Pi's limits. */
export async function mapCallResult(
  results: ResultPipeline,
  schemas: LazySchemas,
  connection: ServerConnection,
  tool: Tool,
  raw: Record<string, unknown>,
): Promise<ToolOutcome> {
  const where = { server: connection.name, operation: tool.name };
  // `content` may be left out (it then means none), but anything else than a list breaks the protocol: an error, not an empty answer.
  if (raw.content !== undefined && !Array.isArray(raw.content)) {
    throw new PiMcpError("failed", `${connection.name}/${tool.name}: the server answered with an invalid result (content is not a list)`);
  }
  const mapped = await results.map(where, raw, { server: connection.name, tool: tool.name });
  if (tool.outputSchema && !mapped.isError) {
    const check = raw.structuredContent === undefined ? { ok: false as const, message: "the tool has an output schema but returned no structured content" } : schemas.check(tool.outputSchema, raw.structuredContent, "structured content");
    if (!check.ok) {
      mapped.details.outputSchemaError = check.message;
      mapped.trailer.push({ type: "text", text: `[warning: ${check.message}]` });
    }
  }
  return results.finish(where, mapped);
}

/**
 * What Pi gets of a progress notification: its numbers, and at most
 * MAX_PROGRESS_MESSAGE_CHARS of its message, made safe (redacted, stripped,
 * then cut). Nothing else the server put in it is passed on.
 */
function boundedProgress(progress: ProgressUpdate, redact: Redactor): ProgressUpdate {
  return {
    progress: progress.progress,
    ...(typeof progress.total === "number" && { total: progress.total }),
    ...(typeof progress.message === "string" && { message: safeHead(progress.message, redact, MAX_PROGRESS_MESSAGE_CHARS) }),
  };
}
