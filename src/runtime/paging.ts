import { PiMcpError } from "../kernel/errors.ts";

/** The most pages one catalog list may take. */
export const MAX_CATALOG_PAGES = 1_000;

export interface Page<T> {
  readonly items: readonly T[];
  readonly nextCursor?: string | undefined;
}

/**
 * Walks a paginated MCP list by explicit cursors: at most 1,000 pages, and a
 * cursor the server already sent is an error rather than an endless loop.
 */
export async function collectPages<T>(what: string, fetchPage: (cursor: string | undefined) => Promise<Page<T>>): Promise<T[]> {
  const items: T[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 1; ; page++) {
    const result = await fetchPage(cursor);
    items.push(...result.items);
    const next = result.nextCursor;
    if (next === undefined || next === null || next === "") return items;
    if (seen.has(next)) throw new PiMcpError("failed", `${what}: the server repeated a pagination cursor (page ${page + 1})`);
    if (page >= MAX_CATALOG_PAGES) throw new PiMcpError("failed", `${what}: more than ${MAX_CATALOG_PAGES} pages`);
    seen.add(next);
    cursor = next;
  }
}
