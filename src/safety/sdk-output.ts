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
import { AsyncLocalStorage } from "node:async_hooks";
import { format } from "node:util";

/** Receives one line the SDK printed (without a trailing newline). */
export type SdkOutputSink = (line: string) => void;

const METHODS = ["log", "info", "warn", "error", "debug", "trace"] as const;

interface SdkOutputState {
  /** Shared by every copy of this module: Pi re-imports the extension on /reload, the console is patched once. */
  readonly scope: AsyncLocalStorage<SdkOutputSink>;
  installed: boolean;
}

const STATE = Symbol.for("pi-mcp.sdk-output");

function state(): SdkOutputState {
  const global = globalThis as { [STATE]?: SdkOutputState };
  global[STATE] ??= { scope: new AsyncLocalStorage<SdkOutputSink>(), installed: false };
  return global[STATE];
}

/**
 * Runs `work` so that whatever the SDK prints while doing it, and in anything
 * it starts (timers, streams, follow-up requests), goes to `sink`.
 */
export function withSdkOutput<T>(sink: SdkOutputSink, work: () => T): T {
  captureSdkConsole();
  return state().scope.run(sink, work);
}

/** Patches `console` once per process (idempotent). */
export function captureSdkConsole(): void {
  const current = state();
  if (current.installed) return;
  current.installed = true;
  for (const method of METHODS) {
    const original = console[method];
    const replacement = function (this: Console, ...args: unknown[]): void {
      if (calledBySdk(replacement)) current.scope.getStore()?.(sdkLine(method, args));
      else original.apply(this, args);
    };
    console[method] = replacement;
  }
}

/** Whether the function that called `wrapper` is the MCP SDK's code (read from the call's stack). */
function calledBySdk(wrapper: (...args: never[]) => unknown): boolean {
  const holder: { stack?: string } = {};
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 1;
  try {
    Error.captureStackTrace(holder, wrapper);
  } finally {
    Error.stackTraceLimit = limit;
  }
  return /[\\/]@modelcontextprotocol[\\/](client|core)[\\/]/.test(holder.stack ?? "");
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
    methods[name] = (...args: unknown[]) => withSdkOutput(sink, () => (method as (...rest: unknown[]) => unknown).apply(transport, args));
  }
  return transport;
}
