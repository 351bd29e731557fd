import { isRecord } from "../safety/keys.ts";
import type { Client } from "@modelcontextprotocol/client";
import { PiMcpError } from "../kernel/errors.ts";
import type { Redactor } from "../kernel/types.ts";
import { requestFailure } from "./errors.ts";
import { ANY_RESULT, isMethodNotFound, type CatalogItem, type OptionalListMethod, type ResourceListMethod } from "../kernel/protocol.ts";
import { collectPages } from "./paging.ts";

const ITEMS_KEY: Readonly<Record<OptionalListMethod, string>> = {
  "resources/list": "resources",
  "resources/templates/list": "resourceTemplates",
  "prompts/list": "prompts",
};

export interface ListRequest {
  readonly server: string;
  readonly timeoutMs: number;
  readonly redact: Redactor;
  readonly signal?: AbortSignal;
  /** Called when the server answered `-32601`: the list counts as empty. */
  readonly notImplemented?: (method: OptionalListMethod) => void;
}

/**
 * Every page of an optional list (at most 1,000 pages, a repeated cursor is
 * an error). A server that does not implement the method (`-32601`) has none
 * of it; any other failure names the method (`docs resources/list failed: …`).
 */
export async function listOptional(client: Client, method: OptionalListMethod, request: ListRequest): Promise<CatalogItem[]> {
  const label = `${request.server} ${method}`;
  const key = ITEMS_KEY[method];
  try {
    return await collectPages(label, async (cursor) => {
      const page = (await client.request({ method, params: cursor === undefined ? {} : { cursor } } as never, ANY_RESULT, {
        timeout: request.timeoutMs,
        ...(request.signal && { signal: request.signal }),
      })) as Record<string, unknown>;
      if (!Array.isArray(page[key])) throw new PiMcpError("failed", `${label} returned no ${key} array`);
      const items = (page[key] as unknown[]).filter(isRecord);
      return { items, nextCursor: typeof page.nextCursor === "string" ? page.nextCursor : undefined };
    });
  } catch (error) {
    if (isMethodNotFound(error)) {
      request.notImplemented?.(method);
      return [];
    }
    if (error instanceof PiMcpError && !request.signal?.aborted) throw error; // already named (a paging problem)
    throw requestFailure(label, error, { timeoutMs: request.timeoutMs, redact: request.redact, ...(request.signal && { signal: request.signal }) });
  }
}

/**
 * A connection's resource catalog: each list is fetched once (every page)
 * and kept with the connection, so it travels with it to the next session;
 * `refresh` (a `list_changed` notice) lists again. A list that failed is
 * asked for again by the next reader, and it alone fails: the other list and
 * the connection carry on.
 */
export class ResourceCatalog {
  private readonly lists = new Map<ResourceListMethod, Promise<CatalogItem[]>>();
  private readonly fetch: (method: ResourceListMethod) => Promise<CatalogItem[]>;

  // Fields written out (no parameter properties): Node's type stripping can load this file as it is.
  constructor(fetch: (method: ResourceListMethod) => Promise<CatalogItem[]>) {
    this.fetch = fetch;
  }

  /** The cached list, fetched now when there is none (or the last attempt failed). */
  get(method: ResourceListMethod): Promise<CatalogItem[]> {
    let list = this.lists.get(method);
    if (list) return list;
    list = this.fetch(method);
    this.lists.set(method, list);
    const pending = list;
    pending.catch(() => {
      if (this.lists.get(method) === pending) this.lists.delete(method);
    });
    return list;
  }

  /** Loads both lists; resolves when both settled, failures included (they are kept for the reader to see). */
  async load(): Promise<void> {
    await Promise.allSettled([this.get("resources/list"), this.get("resources/templates/list")]);
  }

  /** The server said its resources changed: both lists are fetched again, and readers get the new answers. */
  refresh(): Promise<void> {
    this.lists.clear();
    return this.load();
  }
}
