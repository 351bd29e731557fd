/**
 * The one way pi-mcp shows a link to open or opens one in the person's
 * browser (OAuth's authorization URL, an elicitation's web page). Every URL
 * comes from a server, so every URL is untrusted: only `http:` and `https:`
 * are shown as links or opened. Anything else (`file:`, `javascript:`, a
 * custom URI handler that starts a program) is refused with an error naming
 * the server, before any opener sees it.
 */
import { PiMcpError } from "../kernel/errors.ts";
import { stripTerminalControls } from "./text.ts";

export type BrowserOpener = (url: string) => Promise<void>;

/** A URL that is not a web page: never shown as a link, never opened. */
class UnsafeUrlError extends PiMcpError {
  readonly server: string;
  /** The URL's scheme (`file:`), or undefined when it is not a URL at all. */
  readonly scheme: string | undefined;
  constructor(server: string, what: string, scheme: string | undefined) {
    const got = scheme === undefined ? "not a valid URL" : `a ${JSON.stringify(stripTerminalControls(scheme).slice(0, 32))} URL`;
    super("unsafe_url", `MCP server "${server}": ${what} is ${got}; only http and https URLs are shown or opened, so nothing was opened`);
    this.name = "UnsafeUrlError";
    this.server = server;
    this.scheme = scheme;
  }
}

/** `text` as a web URL, or UnsafeUrlError naming `server` and `what` the URL is for. */
export function webUrl(text: string, server: string, what: string): URL {
  const url = URL.parse(text);
  if (url && (url.protocol === "http:" || url.protocol === "https:")) return url;
  throw new UnsafeUrlError(server, what, url?.protocol);
}

/** The `open` package (loaded on use; the launcher is not waited for). */
const openWithOpenPackage: BrowserOpener = async (url) => {
  const { default: open } = await import("open");
  const child = await open(url, { wait: false });
  child.on?.("error", () => undefined);
  child.unref?.();
};

let defaultOpener: BrowserOpener = openWithOpenPackage;

/** Replaces the opener behind {@link openWebPage} (a harness that follows the page like a browser); returns the previous one. */
export function setBrowserOpener(opener: BrowserOpener | undefined): BrowserOpener {
  const previous = defaultOpener;
  defaultOpener = opener ?? openWithOpenPackage;
  return previous;
}

/** Checks `text` (see {@link webUrl}), then opens it with `opener` (default: the browser). */
export async function openWebPage(text: string, server: string, what: string, opener: BrowserOpener = defaultOpener): Promise<void> {
  await opener(webUrl(text, server, what).href);
}
