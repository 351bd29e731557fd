import { formatLimit } from "./limits.ts";

/**
 * Every code a pi-mcp error carries, with what it means: a code says what
 * happened (the server needs authorization, the session ended), so a caller
 * decides by it, never by the wording. Only the CLI entry turns errors into
 * exit codes (`usage` is 2, every other code 1).
 */
export const ERROR_CODES = {
  usage: "a command was given arguments it does not take (the CLI exits with 2)",
  invalid_settings: "a settings file (or a file read as one) has a value of the wrong shape; nothing was changed",
  unreadable_settings: "a settings file cannot be read or parsed",
  not_found: "a named server, prompt or file is not there",
  not_trusted: "project settings need the project's saved trust",
  not_applicable: "the command does not apply to this server (OAuth for a local server, another auth type, a masked definition)",
  lock_timeout: "a file stayed locked by another writer",
  unsafe_folder: "a folder pi-mcp keeps files in is not this user's",
  unsafe_url: "a URL a server sent is not an http or https URL; nothing was opened",
  plugin_failed: "a plugin's hook tap threw or did not finish (PluginHookError names the plugin and the hook)",
  connection_failed: "the server is not connected, or its connection was lost or closed",
  message_too_large: "the server sent a message over the size limit",
  needs_auth: "the server needs an interactive authorization (`auth <server>`)",
  needs_client_registration: "the server needs a pre-registered OAuth client in the settings",
  credential_store: "mcp-auth.json cannot be used (malformed or locked); the server needs authorization meanwhile",
  auth_failed: "an authorization flow failed or was given input it cannot use",
  session_ended: "the Pi session (and its MCP host) has ended",
  needs_session: "a command needs a running Pi session",
  not_offered: "the server does not offer the tool any more",
  not_supported: "the server or this surface does not support what was asked",
  refused: "the server refused what was asked",
  cancelled: "the caller cancelled",
  timed_out: "a request got no answer within its timeout (requestTimeoutMs)",
  deadline_exceeded: "a request, exchange or hook tap went on past its deadline",
  invalid_arguments: "a tool call's arguments do not match the tool's input schema",
  invalid_response: "the server's answer does not have the shape MCP gives it",
  catalog_too_large: "a server's list goes past the catalog's size or page limits",
  request_failed: "the server answered a request with an error, or the request failed otherwise",
  no_model: "Pi has no model selected",
  model_failed: "the model request failed",
  failed: "anything else (kept for plugins written against earlier versions; pi-mcp itself names what happened)",
} as const satisfies Record<string, string>;

export type PiMcpErrorCode = keyof typeof ERROR_CODES;

/**
 * Errors are recognised across module copies. The same module can be loaded
 * twice in one process: Pi loads the extension from source, third-party
 * plugins import the built library, a replaced session's pooled connections
 * keep the copy that made them. As the MCP SDK does (its crossBundleBrand),
 * each instance carries the brands of its class chain under a registry symbol
 * (the same in every copy), and `instanceof` on a branded class checks the
 * brand before the prototype: `error instanceof PiMcpError` and
 * `error.code` hold whichever copy made the error.
 */
const BRANDS = Symbol.for("pi-mcp.errorBrands");

/** The class's own brand (a subclass without one keeps plain prototype semantics). */
function ownBrand(cls: unknown): string | undefined {
  if (typeof cls !== "function" || !Object.hasOwn(cls, "brand")) return undefined;
  const brand = (cls as { brand?: unknown }).brand;
  return typeof brand === "string" ? brand : undefined;
}

function stampBrands(instance: Error, ctor: unknown): void {
  const brands = new Set<string>();
  for (let current = ctor; typeof current === "function"; current = Object.getPrototypeOf(current)) {
    const brand = ownBrand(current);
    if (brand) brands.add(brand);
  }
  Object.defineProperty(instance, BRANDS, { value: brands, enumerable: false, configurable: true });
}

function brandedHasInstance(cls: unknown, value: unknown): boolean {
  const brand = ownBrand(cls);
  if (brand && typeof value === "object" && value !== null && Object.hasOwn(value, BRANDS)) {
    const carried = (value as { [BRANDS]?: unknown })[BRANDS];
    if (typeof (carried as { has?: unknown } | undefined)?.has === "function" && (carried as Set<string>).has(brand)) return true;
  }
  return Function.prototype[Symbol.hasInstance].call(cls as () => unknown, value);
}

export class PiMcpError extends Error {
  static {
    Object.defineProperty(PiMcpError, "brand", { value: "pi-mcp.PiMcpError" });
  }
  static [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class on the right of instanceof (a subclass checks its own brand)
    return brandedHasInstance(this, value);
  }
  readonly code: PiMcpErrorCode;
  constructor(code: PiMcpErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "PiMcpError";
    this.code = code;
    stampBrands(this, new.target);
  }
}

/**
 * Declares `cls`'s own brand (`pi-mcp.<name>`), so `instanceof cls` holds for
 * an instance made by another copy of its module: every subclass that callers
 * test with `instanceof` calls it in a `static {}` block (a declared static
 * field would make the classes of two copies nominally different types).
 */
export function brandError(cls: abstract new (...args: never[]) => PiMcpError, name: string): void {
  Object.defineProperty(cls, "brand", { value: `pi-mcp.${name}` });
}

/** The code of a pi-mcp error (made by any copy of this module), else undefined. */
export function errorCode(error: unknown): PiMcpErrorCode | undefined {
  return error instanceof PiMcpError ? error.code : undefined;
}

/** The first of `codes` that `error` or one of its causes carries (a hook error wraps its tap's error; five levels at most). */
export function codeInCauses<C extends PiMcpErrorCode>(error: unknown, codes: readonly C[]): C | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    const code = errorCode(current);
    if (code !== undefined && (codes as readonly PiMcpErrorCode[]).includes(code)) return code as C;
  }
  return undefined;
}

/** What a call, a command or a tool of a session that has ended fails with (`what` names it). */
export function sessionEnded(what: string): PiMcpError {
  return new PiMcpError("session_ended", `${what}: this Pi session has ended`);
}

/**
 * Why a transport closes the connection by itself (it reports this through
 * `onerror` just before): the connection takes it as its cause, and the
 * requests it ends are told it, not just that the connection was lost.
 */
export class TransportClosedError extends PiMcpError {
  static {
    brandError(TransportClosedError, "TransportClosedError");
  }
  readonly closesConnection = true;
  constructor(message: string) {
    super("connection_failed", message);
    this.name = "TransportClosedError";
  }
}

/**
 * A server sent a message over the size cap (src/kernel/limits.ts). On a
 * shared channel (stdio, legacy SSE, the HTTP notification stream) the
 * connection is closed (`closesConnection`); an HTTP response fails only its
 * own request.
 */
export class MessageTooLargeError extends PiMcpError {
  static {
    brandError(MessageTooLargeError, "MessageTooLargeError");
  }
  readonly limitBytes: number;
  readonly closesConnection: boolean;
  constructor(limitBytes: number, where: string, closesConnection: boolean) {
    super("message_too_large", `the server sent a message larger than the ${formatLimit(limitBytes)} message-size limit (${where})`);
    this.name = "MessageTooLargeError";
    this.limitBytes = limitBytes;
    this.closesConnection = closesConnection;
  }
}

/** Whether a transport closes the connection because of `error` (a pooled connection may come from another copy of this module: the brands recognise it). */
export function closesConnection(error: unknown): error is PiMcpError {
  return error instanceof TransportClosedError || (error instanceof MessageTooLargeError && error.closesConnection === true);
}

/** A tap that threw: names the plugin and the hook so the failure is traceable. */
export class PluginHookError extends PiMcpError {
  static {
    brandError(PluginHookError, "PluginHookError");
  }
  readonly plugin: string;
  readonly hook: string;
  constructor(plugin: string, hook: string, cause: unknown) {
    super("plugin_failed", `plugin "${plugin}" failed in hook "${hook}": ${describeError(cause)}`, { cause });
    this.name = "PluginHookError";
    this.plugin = plugin;
    this.hook = hook;
  }
}

/** What a tap that is still running at its hook's deadline failed with (the cause of its PluginHookError). */
export class TapDeadlineError extends PiMcpError {
  static {
    brandError(TapDeadlineError, "TapDeadlineError");
  }
  readonly deadlineMs: number;
  constructor(deadlineMs: number) {
    super("deadline_exceeded", `it did not finish within ${deadlineMs} ms`);
    this.name = "TapDeadlineError";
    this.deadlineMs = deadlineMs;
  }
}

export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
