import type { Exposure, ExposureSetting } from "./settings.ts";

/**
 * A server connection's place in the status machine (the README lists what
 * each means). `idle`: a lazy server that is not running; it starts when one
 * of its tools (or a command) needs it.
 */
export type ConnectionState =
  | "disabled"
  | "idle"
  | "connecting"
  | "connected"
  | "needs_auth"
  | "needs_client_registration"
  | "retrying"
  | "failed";

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
  /** How many tools have each exposure (direct, deferred, codemode, hidden; `auto` while its catalog is not offered to Pi). */
  readonly exposures: Partial<Record<ExposureSetting, number>>;
  /** The server's place in the context budget (src/runtime/context-budget.ts), while its catalog is offered to Pi. */
  readonly context?: ServerContext;
  readonly connectedAt?: number;
  readonly pid?: number;
  /** When this session took the connection over from an earlier one (after /reload, /new, /resume, /fork). */
  readonly reusedAt?: number;
  /** A lazy server (`lifecycle: "lazy"`): how long it may go unused before it is closed. */
  readonly lazy?: { readonly idleTimeoutMs: number };
  /** The configured roots (`false`: none declared); absent when the server gets Pi's working folder. */
  readonly roots?: false | readonly string[];
  /**
   * A server that keeps announcing list changes (its re-lists were held back
   * within the last minute, src/runtime/relist.ts): the change notices it
   * sent in the last minute, and the longest a re-list waits now.
   */
  readonly noisy?: { readonly notices: number; readonly relistIntervalMs: number };
}

/** A server's tool definitions in the context budget: their estimated size, and the exposure in force and why. */
export interface ServerContext {
  /** The estimated tokens of all its tools' definitions. */
  readonly tokens: number;
  /** The estimated tokens of the definitions declared to the model in every request (its direct tools). */
  readonly declared: number;
  /** How its tools' exposure is set (`mixed`: per tool, differently). */
  readonly setting: ExposureSetting | "mixed";
  /** The exposure in force (`mixed`: its tools have several). */
  readonly exposure: Exposure | "mixed";
  /** What the budget decided for its `auto` tools, when it has some. */
  readonly auto?: "direct" | "deferred";
  /** The budget and the context window it was decided with (tokens). */
  readonly budget?: number;
  readonly window?: number;
  /** Whether `window` is the active model's (else an assumed one). */
  readonly windowKnown?: boolean;
}
