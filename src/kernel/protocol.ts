/*
 * What plugins and the host share about MCP itself: how pi-mcp names itself
 * to servers, the lists a server may offer, and how to read raw answers.
 */
import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/client";

/** How pi-mcp introduces itself to every server (connections and the OAuth client alike). */
export const CLIENT_INFO = { name: "pi-mcp", version: "0.1.0" };

/**
 * A result "schema" that accepts any JSON: lists and calls are checked item by
 * item by us (one bad tool or block must not reject the whole answer).
 */
export const ANY_RESULT = { "~standard": { version: 1 as const, vendor: "pi-mcp", validate: (value: unknown) => ({ value }) } };

/** The lists a server may leave out: a `-32601 Method not found` answer to one of them means "none". */
export type OptionalListMethod = "resources/list" | "resources/templates/list" | "prompts/list";
/** The lists cached with a connection (beside its tools). */
export type ResourceListMethod = "resources/list" | "resources/templates/list";

/** One listed item (a resource, a template, a prompt), as the server sent it. */
export type CatalogItem = Readonly<Record<string, unknown>>;

/** `-32601`: the server does not implement the method it was asked. */
export function isMethodNotFound(error: unknown): boolean {
  return error instanceof ProtocolError && error.code === ProtocolErrorCode.MethodNotFound;
}

/** How many bytes base64 `data` (an image or audio block's) decodes to, without decoding it. */
export function base64Bytes(data: string): number {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}
