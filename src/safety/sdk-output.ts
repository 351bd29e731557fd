/**
 * The MCP SDK writes some diagnostics to `console` (an OAuth error's
 * `error_description`, which a token endpoint may fill with the code, the
 * PKCE verifier or the client secret it was sent; a refresh failure's cause;
 * deprecation notes). None of it may reach the terminal: Pi's TUI would be
 * garbled and a secret shown. Once installed, a `console` call made by the
 * SDK goes to the sink of the work it happened in (a server's retained log,
 * redacted by whoever owns the sink), and is dropped where no work claims it.
 * Every other `console` call is left alone.
 */
import { format } from "node:util";

/** Receives one line the SDK printed (without a trailing newline). */
export type SdkOutputSink = (line: string) => void;

const METHODS = ["log", "info", "warn", "error", "debug", "trace"] as const;

/**
 * The name of the async function a scope runs its work in: it stands in the
 * async stack of everything that work awaits, and names the scope's sink.
 */
const SCOPE_NAME = "pi-mcp-sdk-output#";
const SCOPE_IN_STACK = /pi-mcp-sdk-output#(\d+)/;
/** How many frames are read to find the scope of an SDK call (async frames count; the SDK's auth nests deeply). */
const SCOPE_FRAMES = 200;

/** A sink while work runs in its scope: the entry goes once no work of it is pending. */
interface ActiveScope {
  readonly id: number;
  readonly sink: SdkOutputSink;
  readonly run: <T>(work: () => Promise<T>) => Promise<T>;
  pending: number;
}

interface SdkOutputState {
  /** Shared by every copy of this module: Pi re-imports the extension on /reload, the console is patched once. */
  readonly active: Map<number, ActiveScope>;
  readonly ids: WeakMap<SdkOutputSink, number>;
  nextId: number;
  installed: boolean;
}

const STATE = Symbol.for("pi-mcp.sdk-output.v2");

function state(): SdkOutputState {
  const global = globalThis as { [STATE]?: SdkOutputState };
  global[STATE] ??= { active: new Map(), ids: new WeakMap(), nextId: 1, installed: false };
  return global[STATE];
}

/**
 * Runs `work` so that whatever the SDK prints while doing it, and in
 * everything that work awaits (follow-up requests, an OAuth refresh inside a
 * send), goes to `sink`. The scope is found from the printing call's async
 * stack (V8 keeps the awaiting functions in it), not from
 * AsyncLocalStorage: that would turn on Node's async context tracking for
 * every promise in Pi's process, for good (about 90 ns each, 0.2–0.5 ms of
 * CPU per agent turn in a real Pi).
 */
export async function withSdkOutput<T>(sink: SdkOutputSink, work: () => Promise<T>): Promise<T> {
  captureSdkConsole();
  const scope = enter(sink);
  try {
    return await scope.run(work);
  } finally {
    if (--scope.pending === 0) state().active.delete(scope.id);
  }
}

function enter(sink: SdkOutputSink): ActiveScope {
  const current = state();
  let id = current.ids.get(sink);
  if (id === undefined) {
    id = current.nextId++;
    current.ids.set(sink, id);
  }
  let scope = current.active.get(id);
  if (!scope) {
    const name = `${SCOPE_NAME}${id}`;
    // A function named after the scope; `return await` keeps it in the async stack of what the work awaits.
    const run = { [name]: async <T>(work: () => Promise<T>): Promise<T> => await work() }[name]!;
    scope = { id, sink, run, pending: 0 };
    current.active.set(id, scope);
  }
  scope.pending++;
  return scope;
}

/** Patches `console` once per process (idempotent). */
export function captureSdkConsole(): void {
  const current = state();
  if (current.installed) return;
  current.installed = true;
  for (const method of METHODS) {
    const original = console[method];
    const replacement = function (this: Console, ...args: unknown[]): void {
      if (calledBySdk(replacement)) sinkOfCall(replacement)?.(sdkLine(method, args));
      else original.apply(this, args);
    };
    console[method] = replacement;
  }
}

/** The stack of the call of `wrapper`, `frames` deep (async frames included). */
function callStack(wrapper: (...args: never[]) => unknown, frames: number): string {
  const holder: { stack?: string } = {};
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = frames;
  try {
    Error.captureStackTrace(holder, wrapper);
  } finally {
    Error.stackTraceLimit = limit;
  }
  return holder.stack ?? "";
}

/** Whether the function that called `wrapper` is the MCP SDK's code. */
function calledBySdk(wrapper: (...args: never[]) => unknown): boolean {
  return /[\\/]@modelcontextprotocol[\\/](client|core)[\\/]/.test(callStack(wrapper, 1));
}

/** The sink of the innermost scope the call of `wrapper` runs in, if any. */
function sinkOfCall(wrapper: (...args: never[]) => unknown): SdkOutputSink | undefined {
  const found = SCOPE_IN_STACK.exec(callStack(wrapper, SCOPE_FRAMES));
  return found ? state().active.get(Number(found[1]))?.sink : undefined;
}

function sdkLine(method: (typeof METHODS)[number], args: unknown[]): string {
  const text = format(...args);
  return text.startsWith("[mcp-sdk]") ? text : `[mcp-sdk] console.${method}: ${text}`;
}

/**
 * Makes every call on `transport` run inside `sink`'s scope: requests are
 * sent from wherever they start (a tool call in Pi, a command), and the
 * SDK's OAuth handling (a refresh after a 401, say) runs inside `send`.
 */
export function sdkOutputOf<T extends object>(transport: T, sink: SdkOutputSink): T {
  const methods = transport as unknown as Record<string, unknown>;
  for (const name of ["start", "send", "close", "finishAuth"]) {
    const method = methods[name];
    if (typeof method !== "function") continue;
    // The method's own promise is awaited in the scope (not wrapped in another async function), so the SDK's
    // async frames stay linked to the scope's.
    methods[name] = (...args: unknown[]) =>
      withSdkOutput(sink, () => (method as (...rest: unknown[]) => Promise<unknown>).apply(transport, args));
  }
  return transport;
}
