/*
 * One handshake per stdio process. pi-mcp negotiates the protocol era by
 * probing with `server/discover` on the server's own process (the MCP SDK
 * probes its base stdio transport on a short-lived second process instead:
 * one more spawn per connect). For a 2026-07-28 server the probe is the
 * handshake; a 2025-era server answers it with an error and then gets
 * `initialize` on the same process, which most accept. Some cannot: a bridge
 * opens its upstream session on the first message it receives (the probe),
 * so the real server refuses the second handshake; a server built on an SDK
 * that ends on any request before `initialize` exits on the probe. For the
 * first the connection starts a fresh process and sends `initialize` alone
 * (afterProbe), with a connect timeout of its own, while the spent one is
 * closed beside it; for the second the retry sends `initialize` alone (a
 * server that fails to start looks the same, and costs no more processes). Whatever way a connection finds a server to be
 * 2025-era (EraVerdict), it remembers it, so its later connects (retries,
 * reconnects, a lazy server's next start) skip the probe: one handshake,
 * one round trip less. An ordinary 2025-era server costs what it did: the
 * probe and `initialize` on its one process.
 */
import { ProtocolError, SdkError, SdkErrorCode, type Transport } from "@modelcontextprotocol/client";
import { classifyFailure } from "./errors.ts";

/** What a probe found out: the server speaks the 2025 era only (`initialize`), as of `at`. */
export interface EraVerdict {
  readonly kind: "legacy";
  /** When a probe (or a refused one) found it (ms since the epoch); using the verdict does not renew it. */
  readonly at: number;
}

/**
 * A verdict is used this long, then the server is probed again: a server
 * that was upgraded still answers `initialize`, so an old verdict would keep
 * it on the 2025 era silently (the SDK leaves freshness to the host).
 */
export const ERA_MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000;

/** The `prior` for `client.connect`: a verdict still fresh skips the probe. */
export function priorOf(verdict: EraVerdict | undefined, now: number = Date.now()): { kind: "legacy" } | undefined {
  if (!verdict || now - verdict.at >= ERA_MAX_AGE_MS || verdict.at > now) return undefined;
  return { kind: "legacy" };
}

/**
 * What a transport sent during one handshake (its `send`, wrapped until
 * `release`): whether the era probe went out, and whether `initialize`
 * followed it on the same process.
 */
export class HandshakeWatch {
  probedAt: number | undefined;
  initializedAt: number | undefined;
  private readonly transport: Transport;
  private readonly send: Transport["send"];

  constructor(transport: Transport) {
    this.transport = transport;
    this.send = transport.send;
    transport.send = (message, options) => {
      const method = (message as { method?: unknown }).method;
      if (method === "server/discover") this.probedAt ??= Date.now();
      else if (method === "initialize" && this.probedAt !== undefined) this.initializedAt ??= Date.now();
      return this.send.call(transport, message, options);
    };
  }

  release(): void {
    this.transport.send = this.send;
  }
}

/**
 * What follows a handshake that failed on a stdio process probed in place:
 * - `initialize`: a fresh process gets `initialize` alone, in this attempt;
 * - `probe`: a fresh process is probed again, for up to the connect timeout;
 * - `next-initialize`: the attempt fails as it did, and the next one (the
 *   retry that follows) sends `initialize` alone;
 * - undefined: nothing changes (the failure says nothing about the era).
 */
export type AfterProbe = "initialize" | "probe" | "next-initialize";

/**
 * After a handshake failed on a stdio process that was probed in place:
 *
 * - The process closed while the probe was out (no answer): either a
 *   2025-era server that does not survive a request before `initialize`, or
 *   one that failed to start at all. The attempt fails (a server that fails
 *   to start costs no process more than before), and the retry sends
 *   `initialize` alone, which the first kind takes.
 * - `initialize` followed the probe on the same process and the server
 *   answered it with an error: that process spent its one handshake on the
 *   probe (a bridge that opened its upstream session on it, however long it
 *   took to answer). A fresh one gets `initialize` alone. When the probe had
 *   gone unanswered in its time (STDIO_PROBE_TIMEOUT_MS: the SDK then takes
 *   the server for a 2025-era one) and the error refused the protocol
 *   version, it is a 2026-07-28 server that starts slowly: a fresh one is
 *   probed again.
 * - Anything else (no probe went out, no answer to `initialize`: a timeout, a
 *   crash) is an ordinary failure.
 */
export function afterProbe(watch: HandshakeWatch, error: unknown, probeTimeoutMs: number): AfterProbe | undefined {
  if (watch.probedAt === undefined) return undefined;
  if (watch.initializedAt === undefined) return closedDuringProbe(error) ? "next-initialize" : undefined;
  const refusedVersion = classifyFailure(error) === "unsupported_protocol";
  if (!refusedVersion && !(error instanceof ProtocolError)) return undefined;
  const unanswered = watch.initializedAt - watch.probedAt >= probeTimeoutMs - PROBE_TIMER_SLACK_MS;
  return unanswered && refusedVersion ? "probe" : "initialize";
}

/** A probe's timer can fire this much before its time: an `initialize` sent later than the timeout less this followed a timeout. */
const PROBE_TIMER_SLACK_MS = 50;

/** The SDK's verdict on a process that closed while the probe was in place. */
function closedDuringProbe(error: unknown): boolean {
  return (
    error instanceof SdkError &&
    error.code === SdkErrorCode.EraNegotiationFailed &&
    /closed during the server\/discover probe/.test(error.message)
  );
}

/** The log line that says what is done next, and why. */
export function afterProbeNote(next: AfterProbe, error: string): string {
  switch (next) {
    case "initialize":
      return `[pi-mcp] the server's process could not take a handshake after the server/discover probe (${error}): starting it again with initialize alone\n`;
    case "probe":
      return `[pi-mcp] the server did not answer the server/discover probe in time, then refused initialize for its protocol version (${error}): starting it again and probing for up to connectTimeoutMs\n`;
    case "next-initialize":
      return "[pi-mcp] the server's process ended on the server/discover probe: the next attempt sends initialize alone\n";
  }
}
