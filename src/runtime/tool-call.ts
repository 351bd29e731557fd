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
import { hasHeaderMark } from "./header-declarations.ts";

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
  if (!checked.ok) throw new PiMcpError("invalid_arguments", `${label}: ${checked.message}`);
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
  const scope = new CallSignal(options.signal, connection.requestDeadlineMs);
  const signal = scope.signal;
  // Server requests that arrive during this call (elicitation, sampling) are scoped to it, and end with it.
  const leave = connection.enterCall({ signal, interactive: options.interactive === true });
  const send = () => {
    const client = connection.requireClient();
    const requestOptions = {
      timeout,
      resetTimeoutOnProgress: true,
      maxTotalTimeout: scope.deadlineMs,
      onprogress: (progress: ProgressUpdate) => options.onProgress?.(boundedProgress(progress, connection.host.redact)),
      signal,
    };
    // A 2026-07-28 tool with `x-mcp-header` parameters: the SDK's callTool mirrors them into HTTP headers. The
    // tool is passed without its output schema, which we check ourselves (lazily, per tool) after mapping.
    if (declaresHeaders(tool) && client.getProtocolEra() === "modern") {
      const definition = { ...tool, outputSchema: undefined };
      return client.callTool(params, { ...requestOptions, toolDefinition: definition }) as Promise<Record<string, unknown>>;
    }
    // Every other call: the raw result (the era's decoding still applies), so one odd content block cannot fail the
    // whole call, and without the SDK's per-call work that only callTool does (scanning the schema for headers; on
    // 2026-07-28, a full Zod parse of the result and an era probe that builds a Zod error for every request).
    return client.request({ method: "tools/call", params }, ANY_RESULT, requestOptions) as Promise<Record<string, unknown>>;
  };
  try {
    return await connection.withSessionRecovery(send);
  } catch (error) {
    throw requestFailure(label, error, {
      signal: options.signal,
      deadline: { ms: scope.deadlineMs, signal: scope.deadline },
      timeoutMs: timeout,
      redact: connection.host.redact,
      during: "during the call",
      closeCause: connection.closeCause,
      reconnecting: connection.reconnection,
    });
  } finally {
    scope.end();
    leave();
  }
}

/** Whether a tool's input schema marks a parameter with `x-mcp-header` (read once per listed tool). */
const headerMarks = new WeakMap<Tool, boolean>();
function declaresHeaders(tool: Tool): boolean {
  let marks = headerMarks.get(tool);
  if (marks === undefined) {
    marks = hasHeaderMark(tool.inputSchema);
    headerMarks.set(tool, marks);
  }
  return marks;
}

/** Why a call's signal is aborted once the call has ended (made once: an abort without a reason builds a DOMException). */
const CALL_ENDED = new Error("the tool call has ended");

/**
 * The signal of one call: aborted when Pi aborts the call, when the call's
 * total deadline passes, and when the call ends (server requests scoped to
 * it end with it). One controller and one timer, both released when the call
 * ends. (AbortSignal.timeout and AbortSignal.any kept every call's signals,
 * and the timer, alive until the deadline had passed, 10 minutes by default:
 * about 5 KB and 28 µs of CPU per call, in Pi's process.)
 */
class CallSignal {
  readonly deadlineMs: number;
  private readonly controller = new AbortController();
  /** Aborted when the deadline passes (what tells a deadline from a cancellation). */
  private readonly passed = new AbortController();
  private readonly caller: AbortSignal | undefined;
  private readonly timer: NodeJS.Timeout;
  private readonly onCallerAbort = () => this.controller.abort(this.caller?.reason);

  constructor(caller: AbortSignal | undefined, deadlineMs: number) {
    this.deadlineMs = deadlineMs;
    this.caller = caller;
    if (caller?.aborted) this.controller.abort(caller.reason);
    else caller?.addEventListener("abort", this.onCallerAbort, { once: true });
    this.timer = setTimeout(() => {
      const reason = new DOMException(`the call's total deadline of ${deadlineMs} ms passed`, "TimeoutError");
      this.passed.abort(reason);
      this.controller.abort(reason);
    }, deadlineMs);
    this.timer.unref?.(); // a deadline never keeps Pi alive
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get deadline(): AbortSignal {
    return this.passed.signal;
  }

  end(): void {
    clearTimeout(this.timer);
    this.caller?.removeEventListener("abort", this.onCallerAbort);
    this.controller.abort(CALL_ENDED);
  }
}

/** Runs the result pipeline with the output-schema check between mapping and Pi's limits. */
async function mapCallResult(
  results: ResultPipeline,
  schemas: LazySchemas,
  connection: ServerConnection,
  tool: Tool,
  raw: Record<string, unknown>,
): Promise<ToolOutcome> {
  const where = { server: connection.name, operation: tool.name };
  // `content` may be left out (it then means none), but anything else than a list breaks the protocol: an error, not an empty answer.
  if (raw.content !== undefined && !Array.isArray(raw.content)) {
    throw new PiMcpError(
      "invalid_response",
      `${connection.name}/${tool.name}: the server answered with an invalid result (content is not a list)`,
    );
  }
  const mapped = await results.map(where, raw, { server: connection.name, tool: tool.name });
  if (tool.outputSchema && !mapped.isError) {
    const check =
      raw.structuredContent === undefined
        ? { ok: false as const, message: "the tool has an output schema but returned no structured content" }
        : schemas.check(tool.outputSchema, raw.structuredContent, "structured content");
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
