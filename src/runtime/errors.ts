import { codeInCauses, describeError, PiMcpError, type PiMcpErrorCode } from "../kernel/errors.ts";
import type { Redactor } from "../kernel/types.ts";
import { safeText } from "../safety/text.ts";
import {
  InsufficientScopeError,
  OAuthClientFlowError,
  OAuthError,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  UnauthorizedError,
  UnsupportedProtocolVersionError,
} from "@modelcontextprotocol/client";

/** How a failed connect or a lost connection should be handled. */
export type FailureKind = "retryable" | "auth" | "client_registration" | "unsupported_protocol" | "terminal";

/** The codes of the auth machinery's errors (plugins/auth-oauth/errors.ts). */
const AUTH_CODES = ["needs_auth", "needs_client_registration", "credential_store"] as const satisfies readonly PiMcpErrorCode[];

/**
 * The connection state an OAuth failure asks for: the code of an error of the
 * auth machinery, also when wrapped as a `cause` (a plugin hook error) or
 * passed through the SDK's transport seams (an unusable credential store
 * needs authorization too).
 */
export function authStateOf(error: unknown): "needs_auth" | "needs_client_registration" | undefined {
  const code = codeInCauses(error, AUTH_CODES);
  return code === "credential_store" ? "needs_auth" : code;
}

/**
 * An error pi-mcp already phrased for the request (not connected, a paging
 * problem, a plugin's hook): passed on as it is. An error of the auth
 * machinery is not: it is classified (and named) by the request it ended.
 */
export function isNamedFailure(error: unknown): error is PiMcpError {
  return error instanceof PiMcpError && !(AUTH_CODES as readonly PiMcpErrorCode[]).includes(error.code);
}

/**
 * Sorts a connection failure. The spec retries everything except
 * authentication, invalid configuration and an unsupported protocol.
 */
export function classifyFailure(error: unknown): FailureKind {
  const authState = authStateOf(error);
  if (authState) return authState === "needs_client_registration" ? "client_registration" : "auth";
  if (error instanceof UnauthorizedError || error instanceof InsufficientScopeError || error instanceof OAuthError) return "auth";
  // An issuer that does not check out, a rejected registration, an insecure token endpoint: retrying cannot help.
  if (error instanceof OAuthClientFlowError || namesAnotherResource(error)) return "terminal";
  if (error instanceof SdkHttpError && (error.status === 401 || error.status === 403)) return "auth";
  if (error instanceof SdkError) {
    if (error.code === SdkErrorCode.ClientHttpAuthentication || error.code === SdkErrorCode.ClientHttpForbidden) return "auth";
    // Negotiation "fails" also when the process dies or the connection drops mid-probe: that is retryable.
    if (error.code === SdkErrorCode.EraNegotiationFailed && !error.cause && !/closed|timed out|terminated/i.test(error.message)) {
      return "unsupported_protocol";
    }
  }
  if (error instanceof UnsupportedProtocolVersionError) return "unsupported_protocol";
  if (error instanceof Error && /protocol version is not supported/i.test(error.message)) return "unsupported_protocol";
  return "retryable";
}

/**
 * The SDK's refusal of protected resource metadata that names another
 * resource than the server's URL (RFC 9728 §3.3). It is a plain Error, known
 * only by its words; no retry makes the two match, and each retry would ask
 * the same server again.
 */
function namesAnotherResource(error: unknown): boolean {
  return error instanceof Error && /^Protected resource .+ does not match expected /.test(error.message);
}

/**
 * What to add to the cause when a Streamable HTTP URL refused the protocol
 * outright (404 or 405 to a POST, as a legacy SSE endpoint answers): pi-mcp
 * never falls back to SSE, so it says so and how to choose SSE.
 */
export function noStreamableHttpHint(error: unknown): string | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    if (current instanceof SdkHttpError && (current.status === 404 || current.status === 405)) {
      return `the URL does not accept Streamable HTTP (HTTP ${current.status}); pi-mcp never falls back to legacy SSE: if this is an SSE server, set "transport": "sse"`;
    }
  }
  return undefined;
}

/** An expired Streamable HTTP session: the server no longer knows our session id. */
export function isExpiredSession(error: unknown, hadSession: boolean): boolean {
  return hadSession && error instanceof SdkHttpError && (error.status === 404 || error.status === 400);
}

export function isConnectionLost(error: unknown): boolean {
  if (error instanceof SdkError)
    return (
      error.code === SdkErrorCode.ConnectionClosed || error.code === SdkErrorCode.NotConnected || error.code === SdkErrorCode.SendFailed
    );
  return error instanceof Error && error.message === "Not connected";
}

/** The SDK's own check of `maxTotalTimeout` (made when progress arrives after the deadline). */
function isPastTotalTimeout(error: unknown): boolean {
  return (
    isTimeout(error) &&
    (error as SdkError).data !== undefined &&
    typeof ((error as SdkError).data as { maxTotalTimeout?: unknown }).maxTotalTimeout === "number"
  );
}

function isTimeout(error: unknown): boolean {
  return error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout;
}

/**
 * A server reconnecting after an unexpected close: why it closed (redacted
 * already), the retry in progress ("retry 1 of 2 in 1 s"), and why the last
 * retry failed, once one has.
 */
export interface Reconnection {
  readonly cause?: string;
  readonly retry: string;
  readonly lastFailure?: string;
}

/** ". The last retry failed: …" once a retry of the reconnect has failed; "" before. */
export function lastRetryFailure(reconnection: Reconnection): string {
  return reconnection.lastFailure === undefined ? "" : `. The last retry failed: ${reconnection.lastFailure}`;
}

/**
 * A failed MCP request as one error that names it (`label`): cancelled (the
 * caller's signal fired), timed out, the connection lost (`during` says when),
 * or the cause, with terminal controls and settings' secrets removed.
 */
export function requestFailure(
  label: string,
  error: unknown,
  how: {
    readonly timeoutMs: number;
    readonly redact: Redactor;
    readonly signal?: AbortSignal;
    /** The request's total deadline (`requestDeadlineMs`), when it has one beside its timeout. */
    readonly deadline?: { readonly ms: number; readonly signal: AbortSignal };
    readonly during?: string;
    readonly closeCause?: Error | undefined;
    /** The server is reconnecting after the close that ended the request: why it closed, and the retry in progress. */
    readonly reconnecting?: Reconnection | undefined;
  },
): PiMcpError {
  if (how.signal?.aborted) return new PiMcpError("cancelled", `${label} was cancelled`, { cause: error });
  if (how.deadline && (how.deadline.signal.aborted || isPastTotalTimeout(error))) {
    return new PiMcpError(
      "deadline_exceeded",
      `${label} took longer than its total deadline of ${how.deadline.ms} ms (requestDeadlineMs; progress does not extend it)`,
      { cause: error },
    );
  }
  if (isTimeout(error)) return new PiMcpError("timed_out", `${label} timed out after ${how.timeoutMs} ms`, { cause: error });
  // The transport closed the connection for a reason of its own (a message over the size cap): that reason, not "lost".
  if (isConnectionLost(error) && how.closeCause) {
    return new PiMcpError(
      "connection_failed",
      safeText(`${label} failed: ${how.closeCause.message}; the connection was closed`, how.redact),
      { cause: error },
    );
  }
  if (isConnectionLost(error)) {
    const during = how.during ? ` ${how.during}` : "";
    const reconnecting = how.reconnecting
      ? `${how.reconnecting.cause ? ` (${how.reconnecting.cause})` : ""}; it is reconnecting (${how.reconnecting.retry})${lastRetryFailure(how.reconnecting)}`
      : "";
    return new PiMcpError(
      "connection_failed",
      safeText(`${label} failed: the server's connection was lost${during}${reconnecting}`, how.redact),
      {
        cause: error,
      },
    );
  }
  return new PiMcpError("request_failed", safeText(`${label} failed: ${describeError(error)}`, how.redact), { cause: error });
}
