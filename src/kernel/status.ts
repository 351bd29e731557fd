import type { Exposure } from "./settings.ts";

/**
 * A server connection's place in the status machine (the README lists what
 * each means). `idle`: a lazy server that is not running; it starts when one
 * of its tools (or a command) needs it.
 */
export type ConnectionState = "disabled" | "idle" | "connecting" | "connected" | "needs_auth" | "needs_client_registration" | "retrying" | "failed";

/** What `/mcp status` and `test` report about one server. */
export interface ConnectionStatus {
  readonly name: string;
  readonly state: ConnectionState;
  readonly attempts: number;
  readonly nextRetryAt?: number;
  readonly cause?: string;
  readonly protocolVersion?: string;
  readonly serverInfo?: { readonly name: string; readonly version: string };
  readonly tools: number;
  /** How many tools have each exposure (direct, deferred, codemode, hidden). */
  readonly exposures: Partial<Record<Exposure, number>>;
  readonly connectedAt?: number;
  readonly pid?: number;
  /** When this session took the connection over from an earlier one (after /reload, /new, /resume, /fork). */
  readonly reusedAt?: number;
  /** A lazy server (`lifecycle: "lazy"`): how long it may go unused before it is closed. */
  readonly lazy?: { readonly idleTimeoutMs: number };
  /** The configured roots (`false`: none declared); absent when the server gets Pi's working folder. */
  readonly roots?: false | readonly string[];
}
