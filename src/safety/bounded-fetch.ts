import type { FetchLike } from "@modelcontextprotocol/client";
import { MessageTooLargeError, PiMcpError } from "../kernel/errors.ts";
import { MAX_MESSAGE_BYTES } from "../kernel/limits.ts";

const LF = 0x0a;
const CR = 0x0d;

/** One fetch's request, as its caller made it. */
export interface Exchange {
  readonly url: string | URL;
  readonly init: RequestInit | undefined;
}

/**
 * A fetch whose response bodies hold at most one message of `maxBytes`
 * each, so nothing a server sends can grow the host's memory past it:
 *
 * - an event stream (`text/event-stream`) may run forever, but each event
 *   (the bytes between two blank lines) is at most `maxBytes`;
 * - any other body (a JSON answer, an error page, a redirect) is at most
 *   `maxBytes` in all, and one that declares more is refused before reading.
 *
 * Past the cap the body fails with MessageTooLargeError (the reading stops,
 * the connection to the server is dropped), and `onTooLarge` learns of it
 * first, with the exchange's request, so the transport can tell which
 * request or stream it ended.
 */
export function boundedFetch(
  base: FetchLike,
  maxBytes: number,
  onTooLarge: (error: MessageTooLargeError, eventStream: boolean, exchange: Exchange) => void,
): FetchLike {
  return async (url, init) => {
    const response = await base(url, init);
    if (!response.body) return response;
    const eventStream = /^text\/event-stream\b/i.test(response.headers.get("content-type") ?? "");
    const tooLarge = () => {
      const error = new MessageTooLargeError(maxBytes, eventStream ? "HTTP event stream" : "HTTP response", false);
      onTooLarge(error, eventStream, { url, init });
      return error;
    };
    const declared = Number(response.headers.get("content-length") ?? Number.NaN);
    if (!eventStream && declared > maxBytes) {
      await response.body.cancel().catch(() => undefined);
      throw tooLarge();
    }
    const overflows = eventStream ? eventSizeCheck(maxBytes) : totalSizeCheck(maxBytes);
    const body = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          if (overflows(chunk)) controller.error(tooLarge());
          else controller.enqueue(chunk);
        },
      }),
    );
    return withBody(response, body);
  };
}

/**
 * A fetch for one-shot documents from a server (OAuth metadata, registration
 * and token answers): each body holds at most the message cap, and each
 * exchange, its body read included, ends within `deadlineMs` (what
 * `deadlineSetting` names in the error). A document that never ends, or
 * trickles in forever, costs one message of memory and one deadline of time.
 */
export function documentFetch(deadlineMs: number, deadlineSetting: string, base: FetchLike = fetch): FetchLike {
  const bounded = boundedFetch(base, MAX_MESSAGE_BYTES, () => undefined);
  return (url, init) => {
    const deadline = new AbortController();
    // The origin only: a path or query may hold a setting's secret.
    const where = URL.canParse(String(url)) ? new URL(String(url)).origin : "the server";
    const timer = setTimeout(
      () =>
        deadline.abort(new PiMcpError("deadline_exceeded", `a request to ${where} took longer than ${deadlineMs} ms (${deadlineSetting})`)),
      deadlineMs,
    );
    timer.unref?.(); // a finished exchange leaves it pending, harmlessly: aborting a read body does nothing
    return fetchUntil(bounded, deadline.signal)(url, init);
  };
}

/** A fetch whose every exchange, its body read included, ends when `signal` aborts (a transport's close): nothing it started outlives it. */
export function fetchUntil(base: FetchLike, signal: AbortSignal): FetchLike {
  return (url, init) => base(url, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, signal]) : signal });
}

/** The same response (status, headers, where it came from) reading `body`. */
function withBody(response: Response, body: ReadableStream<Uint8Array>): Response {
  const bounded = new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  for (const key of ["url", "redirected", "type"] as const) Object.defineProperty(bounded, key, { value: response[key] });
  return bounded;
}

/** True once the body has grown past `maxBytes`. */
function totalSizeCheck(maxBytes: number): (chunk: Uint8Array) => boolean {
  let total = 0;
  return (chunk) => {
    total += chunk.length;
    return total > maxBytes;
  };
}

/**
 * True once the server-sent event in progress has grown past `maxBytes`.
 * An event ends at a blank line; lines end in LF, CR or CRLF (the SSE grammar).
 */
function eventSizeCheck(maxBytes: number): (chunk: Uint8Array) => boolean {
  let eventBytes = 0;
  let lineEmpty = true;
  let afterCr = false;
  return (chunk) => {
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i]!;
      if (byte === LF && afterCr) {
        afterCr = false; // the LF of a CRLF: the line already ended
        continue;
      }
      afterCr = byte === CR;
      if (byte === LF || byte === CR) {
        if (lineEmpty) eventBytes = 0;
        lineEmpty = true;
        continue;
      }
      lineEmpty = false;
      if (++eventBytes > maxBytes) return true;
    }
    return false;
  };
}
