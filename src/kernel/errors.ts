import { formatLimit } from "./limits.ts";

/** Errors that library code throws; only the CLI entry turns them into exit codes. */
export type PiMcpErrorCode =
  | "usage"
  | "invalid_settings"
  | "unreadable_settings"
  | "not_found"
  | "not_trusted"
  | "lock_timeout"
  | "plugin_failed"
  | "connection_failed"
  | "message_too_large"
  | "failed";

export class PiMcpError extends Error {
  readonly code: PiMcpErrorCode;
  constructor(code: PiMcpErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "PiMcpError";
    this.code = code;
  }
}

/**
 * Why a transport closes the connection by itself (it reports this through
 * `onerror` just before): the connection takes it as its cause, and the
 * requests it ends are told it, not just that the connection was lost.
 */
export class TransportClosedError extends PiMcpError {
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
  readonly limitBytes: number;
  readonly closesConnection: boolean;
  constructor(limitBytes: number, where: string, closesConnection: boolean) {
    super("message_too_large", `the server sent a message larger than the ${formatLimit(limitBytes)} message-size limit (${where})`);
    this.name = "MessageTooLargeError";
    this.limitBytes = limitBytes;
    this.closesConnection = closesConnection;
  }
}

/** Whether a transport closes the connection because of `error` (checked by shape: a pooled connection may come from another copy of this module). */
export function closesConnection(error: unknown): error is PiMcpError {
  return error instanceof Error && (error as { closesConnection?: unknown }).closesConnection === true;
}

/** A tap that threw: names the plugin and the hook so the failure is traceable. */
export class PluginHookError extends PiMcpError {
  readonly plugin: string;
  readonly hook: string;
  constructor(plugin: string, hook: string, cause: unknown) {
    super("plugin_failed", `plugin "${plugin}" failed in hook "${hook}": ${describeError(cause)}`, { cause });
    this.name = "PluginHookError";
    this.plugin = plugin;
    this.hook = hook;
  }
}

export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
