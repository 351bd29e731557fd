/*
 * Connection failures in plain words, with their evidence: how a stdio
 * server's process ended and the last lines it wrote to stderr, the HTTP
 * status a server answered, the network error's own code and address, or
 * what the connection was doing when its time ran out. This is the cause
 * `test`, `/mcp status` and the Attention Notice show.
 */
import { STATUS_CODES } from "node:http";
import { SdkError, SdkErrorCode, SdkHttpError, SseError } from "@modelcontextprotocol/client";
import { describeError, PiMcpError } from "../kernel/errors.ts";
import type { Redactor, TransportEvidence } from "../kernel/types.ts";
import { headOf, safeText } from "../safety/text.ts";
import { authStateOf, classifyFailure } from "./errors.ts";

/** The most stderr lines a cause quotes, and the most characters of each. */
export const STDERR_TAIL_LINES = 3;
export const STDERR_LINE_CHARS = 160;

/** The connect deadline ran out (`connectTimeoutMs`). */
export class ConnectTimeoutError extends PiMcpError {
  readonly timeoutMs: number;
  constructor(timeoutMs: number) {
    super("connection_failed", `connecting took longer than ${timeoutMs} ms`);
    this.name = "ConnectTimeoutError";
    this.timeoutMs = timeoutMs;
  }
}

export interface FailureContext {
  /** What the transport saw of the server (a stdio process's exit and stderr). */
  readonly evidence?: TransportEvidence | undefined;
  /** What the connection was doing, in words ("waiting for the server's answer to initialize"). */
  readonly phase: string;
  readonly connectTimeoutMs: number;
  readonly redact: Redactor;
  /** Where a remote server is (`host:port`), for network failures that do not say. */
  readonly target?: string;
}

/** Why a connect attempt failed, in plain words, with the evidence that shows it. */
export function explainConnectFailure(error: unknown, context: FailureContext): string {
  // Authentication failures already say which command helps; their words stay.
  if (authStateOf(error) !== undefined || classifyFailure(error) === "auth") return describeError(error);
  const stderr = stderrTail(context.evidence, context.redact);
  if (context.evidence?.exit) return `the server process ${context.evidence.exit} while connecting${stderr}`;
  const spawn = spawnProblem(error);
  if (spawn) return spawn;
  if (
    error instanceof ConnectTimeoutError ||
    (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout && context.phase !== LISTING)
  ) {
    return (
      `connecting took longer than ${context.connectTimeoutMs} ms (connectTimeoutMs) while ${context.phase}${stderr}. ` +
      "A server that needs longer to start (a first `npx -y` run downloads its package) needs a higher connectTimeoutMs in its definition"
    );
  }
  if (causes(error).some((each) => each instanceof SseError && typeof each.code === "number" && each.code >= 200 && each.code < 300)) {
    return `the URL answered, but not with an event stream (${firstLine(plainWords(error), context.redact)}): is it the server's SSE endpoint?`;
  }
  const status = httpStatusOf(error);
  if (status !== undefined)
    return `the server answered HTTP ${status}${STATUS_CODES[status] ? ` ${STATUS_CODES[status]}` : ""} (${firstLine(plainWords(error), context.redact)})`;
  const network = networkProblem(error);
  if (network) return `could not reach ${context.target ?? "the server"}: ${network}`;
  return `${firstLine(plainWords(error), context.redact)}${stderr}`;
}

/** The most characters of an error's own words (a server's error page, an HTML body) a cause quotes. */
const ERROR_WORDS_CHARS = 200;

/**
 * An error's words without the SDK's "Version negotiation probe failed: "
 * (pi-mcp's own mechanics, not the server's problem).
 */
function plainWords(error: unknown): string {
  return describeError(error).replace(/^Version negotiation (?:probe )?failed: /, "");
}

/** The first line of text, redacted before it is cut, at most ERROR_WORDS_CHARS; an HTML page is named, not quoted. */
function firstLine(text: string, redact: Redactor): string {
  const safe = safeText(text, redact).trim();
  const html = /<(?:!doctype|html|head|body)\b/i.exec(safe);
  const kept = html ? `${safe.slice(0, html.index).trim()} (an HTML page)`.trim() : safe.split("\n")[0]!.trim();
  if (kept.length > ERROR_WORDS_CHARS) return `${kept.slice(0, ERROR_WORDS_CHARS)}…`;
  return !html && safe.includes("\n") ? `${kept} …` : kept;
}

/** A connection that was up and closed on its own: how the process ended, when that is known. */
export function explainLostConnection(evidence: TransportEvidence | undefined, redact: Redactor): string {
  if (!evidence?.exit) return "the connection closed unexpectedly";
  return `the connection closed unexpectedly: the server process ${evidence.exit}${stderrTail(evidence, redact)}`;
}

/** What the connection is doing while its server lists its catalog (a request timeout there is not the connect deadline). */
export const LISTING = "listing its tools and resources";

/**
 * The last few stderr lines, redacted and stripped of terminal controls
 * before anything is cut, each line and their number bounded.
 */
function stderrTail(evidence: TransportEvidence | undefined, redact: Redactor): string {
  const text = evidence?.stderrTail ? safeText(evidence.stderrTail, redact) : "";
  const lines = telling(text.split("\n").map((line) => line.trim()));
  if (lines.length === 0) return "";
  const cut = lines.map((line) => headOf(line, STDERR_LINE_CHARS));
  return `; its last stderr line${cut.length === 1 ? "" : "s"}: ${cut.join(" | ")}`;
}

/** Stack frames, lone brackets and runtime banners say nothing about the cause. */
const NOISE = /^(?:$|at\s|[{}()[\]^~,;]+$|Node\.js v\d|Traceback \(most recent call last\))/;
/** A line that names a problem: where the quoted lines start when there is one. */
const PROBLEM =
  /\b(?:\w*Error|\w*Exception|error|fatal|panic|cannot|can't|could not|failed|denied|refused|not found|no such|missing|invalid|unknown)\b/i;

/**
 * The lines of a stderr tail worth quoting: noise dropped, from the last
 * line that names a problem on (Node prints `Error: Cannot find module …`
 * before its stack), else the last lines; at most STDERR_TAIL_LINES.
 */
function telling(lines: readonly string[]): string[] {
  const kept = lines.filter((line) => !NOISE.test(line));
  const problem = kept.findLastIndex((line) => PROBLEM.test(line));
  const from = problem === -1 ? Math.max(0, kept.length - STDERR_TAIL_LINES) : problem;
  return kept.slice(from, from + STDERR_TAIL_LINES);
}

/** Errors and their causes, outermost first (bounded: a cause chain can be circular). */
function causes(error: unknown): Error[] {
  const chain: Error[] = [];
  for (let current = error; current instanceof Error && chain.length < 8 && !chain.includes(current); current = current.cause)
    chain.push(current);
  return chain;
}

type SystemError = Error & { code?: unknown; syscall?: unknown; path?: unknown; address?: unknown; port?: unknown };

/** A program that could not be started (`spawn … ENOENT`): which one, and why. */
function spawnProblem(error: unknown): string | undefined {
  const failed = causes(error).find(
    (each) => typeof (each as SystemError).syscall === "string" && String((each as SystemError).syscall).startsWith("spawn"),
  ) as SystemError | undefined;
  if (!failed) return undefined;
  const code = typeof failed.code === "string" ? failed.code : "";
  const program = typeof failed.path === "string" ? JSON.stringify(failed.path) : "the server's command";
  const why = code === "ENOENT" ? "no such program or folder" : code === "EACCES" ? "permission denied" : describeError(failed);
  return `could not start ${program}: ${why}${code ? ` (${code})` : ""}`;
}

/** The HTTP status of a refused request (Streamable HTTP or legacy SSE). */
function httpStatusOf(error: unknown): number | undefined {
  for (const each of causes(error)) {
    if (each instanceof SdkHttpError && typeof each.status === "number") return each.status;
    // The SSE transport's error carries the status of the event stream's GET as `code`.
    // A 2xx with the wrong content type is not a refusal: its own words say what was wrong.
    if (each instanceof SseError && typeof each.code === "number" && each.code >= 400 && each.code < 600) return each.code;
  }
  return undefined;
}

/**
 * The network error under a `fetch failed`: its own code and address
 * (`ECONNREFUSED 127.0.0.1:8080`, `ENOTFOUND mcp.example.com`), or its words.
 */
function networkProblem(error: unknown): string | undefined {
  const chain = causes(error);
  if (!chain.some((each) => /fetch failed/i.test(each.message))) return undefined;
  const system = chain.findLast((each) => /^E[A-Z0-9]+$/.test(String((each as SystemError).code))) as SystemError | undefined;
  const tls = chain.find((each) => /^ERR_SSL_/.test(String((each as SystemError).code))) as SystemError | undefined;
  if (tls) return `the TLS handshake failed (${String(tls.code)}): is it a plain http:// server?`;
  if (system && typeof system.address === "string")
    return `${String(system.code)} ${system.address}${system.port !== undefined ? `:${String(system.port)}` : ""}`;
  if (system) return describeError(system).replace(/^getaddrinfo /, "");
  // The SSE transport folds its cause into its message: "SSE error: TypeError: fetch failed: connect ECONNREFUSED 127.0.0.1:1".
  const messages = chain.map((each) => each.message).join(" ");
  const folded = /\b(E[A-Z]{3,})\s+(\S+)/.exec(messages);
  if (folded) return `${folded[1]} ${folded[2]}`;
  if (/\bbad port\b/.test(messages)) return "fetch refuses this port (it is on the list of ports browsers block)";
  return describeError(chain.at(-1));
}
