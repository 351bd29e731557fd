/**
 * The loopback callback server of an authorization flow (RFC 8252): listens on
 * the redirect URI's host and port, accepts one GET on its path whose `state`
 * matches the flow, answers the browser with a short page, and hands the
 * callback URL to the flow. Anything else gets an error page and the flow keeps
 * waiting. Nothing it receives is logged.
 */
import { timingSafeEqual } from "node:crypto";
import { createServer, type Server } from "node:http";
import { AuthFlowError } from "./errors.ts";

export interface LoopbackListener {
  /** Resolves with the callback URL once a request with the flow's state arrived. */
  readonly callback: Promise<URL>;
  close(): Promise<void>;
}

const PAGE = (title: string, text: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body style="font-family: sans-serif; margin: 3em"><h1>${title}</h1><p>${text}</p></body></html>`;

export function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** Host to bind for a loopback redirect URI (`localhost` binds IPv4 loopback). */
function bindHost(url: URL): string {
  if (url.hostname === "[::1]") return "::1";
  if (url.hostname === "localhost") return "127.0.0.1";
  return url.hostname;
}

/** `state` answers the state the flow expects (empty while no flow is ready: every callback is refused). */
export async function listenForCallback(redirectUri: string, state: () => string): Promise<LoopbackListener> {
  const redirect = new URL(redirectUri);
  const port = Number(redirect.port || 80);
  let deliver: (url: URL) => void = () => undefined;
  const callback = new Promise<URL>((resolve) => (deliver = resolve));
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", redirect);
    const page = (status: number, title: string, text: string) => {
      res.writeHead(status, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
      res.end(PAGE(title, text));
    };
    if (req.method !== "GET" || url.pathname !== redirect.pathname) return page(404, "Not found", "This is pi-mcp's OAuth callback.");
    const received = url.searchParams.get("state");
    const expected = state();
    if (received === null || expected === "" || !sameText(received, expected))
      return page(400, "Authorization not accepted", "This callback does not belong to the authorization pi-mcp is waiting for.");
    const failed = url.searchParams.has("error");
    page(
      200,
      failed ? "Authorization failed" : "Authorization received",
      failed ? "Return to pi-mcp for details." : "pi-mcp received the authorization. You can close this window.",
    );
    deliver(url);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        new AuthFlowError(
          `cannot receive the authorization callback on ${redirect.host} (${error.code ?? "error"}); ` +
            "free that port, configure another loopback auth.redirectUri, or use --no-open and complete the flow with --callback",
        ),
      ),
    );
    server.listen(port, bindHost(redirect), () => resolve());
  });
  return {
    callback,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
