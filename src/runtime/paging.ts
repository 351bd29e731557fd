import { PiMcpError } from "../kernel/errors.ts";
import { formatLimit, MAX_CATALOG_BYTES } from "../kernel/limits.ts";
import { jsonLength } from "../safety/json.ts";

/** The most pages one catalog list may take. */
export const MAX_CATALOG_PAGES = 1_000;

export interface Page<T> {
  readonly items: readonly T[];
  readonly nextCursor?: string | undefined;
}

/**
 * Walks a paginated MCP list by explicit cursors: at most 1,000 pages, and a
 * cursor the server already sent is an error rather than an endless loop. The
 * items kept add up to at most MAX_CATALOG_BYTES (as JSON): pages far below
 * the message cap, but without end, cannot use up memory before the page
 * limit is reached.
 */
export async function collectPages<T>(what: string, fetchPage: (cursor: string | undefined) => Promise<Page<T>>): Promise<T[]> {
  const items: T[] = [];
  const seen = new Set<string>();
  let bytes = 0;
  let cursor: string | undefined;
  for (let page = 1; ; page++) {
    const result = await fetchPage(cursor);
    bytes += jsonLength(result.items);
    if (bytes > MAX_CATALOG_BYTES) {
      throw new PiMcpError(
        "catalog_too_large",
        `${what}: the list is larger than the ${formatLimit(MAX_CATALOG_BYTES)} catalog-size limit (after ${page} pages)`,
      );
    }
    for (const item of result.items) items.push(item); // not push(...items): a page of a million items would overflow the call stack
    const next = result.nextCursor;
    if (next === undefined || next === null || next === "") return items;
    if (seen.has(next)) throw new PiMcpError("invalid_response", `${what}: the server repeated a pagination cursor (page ${page + 1})`);
    if (page >= MAX_CATALOG_PAGES) throw new PiMcpError("catalog_too_large", `${what}: more than ${MAX_CATALOG_PAGES} pages`);
    seen.add(next);
    cursor = next;
  }
}
