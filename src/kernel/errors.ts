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
  | "failed";

export class PiMcpError extends Error {
  readonly code: PiMcpErrorCode;
  constructor(code: PiMcpErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "PiMcpError";
    this.code = code;
  }
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
