/*
 * A server's catalog, the one place that knows it: its validated tool list
 * (every page, checked tool by tool, filtered by the settings) and its
 * resource lists. A connection keeps one, and it travels with the
 * connection to the next session; the host offers Pi what it holds.
 */
import { isRecord } from "../safety/keys.ts";
import { forEachStructuralChar } from "../safety/json.ts";
import type { Client, Tool } from "@modelcontextprotocol/client";
import picomatch from "picomatch";
import type { ToolFilter } from "../kernel/settings.ts";
import { invalidHeaderMarking } from "./header-declarations.ts";
import { PiMcpError } from "../kernel/errors.ts";
import { MAX_NESTING_DEPTH } from "../kernel/limits.ts";
import type { Redactor } from "../kernel/types.ts";
import { isNamedFailure, requestFailure } from "./errors.ts";
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
      if (!Array.isArray(page[key])) throw new PiMcpError("invalid_response", `${label} returned no ${key} array`);
      const items = (page[key] as unknown[]).filter(isRecord);
      return { items, nextCursor: typeof page.nextCursor === "string" ? page.nextCursor : undefined };
    });
  } catch (error) {
    if (isMethodNotFound(error)) {
      request.notImplemented?.(method);
      return [];
    }
    if (isNamedFailure(error) && !request.signal?.aborted) throw error; // already named (a paging problem)
    throw requestFailure(label, error, {
      timeoutMs: request.timeoutMs,
      redact: request.redact,
      ...(request.signal && { signal: request.signal }),
    });
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

  /**
   * The server said its resources changed: both lists are fetched again, and
   * readers get the new answers. Says whether they differ from the ones
   * before (a list that failed before or now counts as changed).
   */
  async refresh(): Promise<boolean> {
    const before = await this.answers();
    this.lists.clear();
    await this.load();
    const after = await this.answers();
    return before === undefined || after === undefined || before !== after;
  }

  /** Both lists as one JSON text, once they have settled; undefined when one failed. */
  private async answers(): Promise<string | undefined> {
    const methods: ResourceListMethod[] = ["resources/list", "resources/templates/list"];
    const lists = await Promise.all(methods.map((method) => (this.lists.get(method) ?? Promise.resolve([])).catch(() => undefined)));
    return lists.includes(undefined) ? undefined : JSON.stringify(lists);
  }
}

/**
 * Tool definitions nested deeper than this (objects and arrays) are left out:
 * the transcript's system messages carry each tool's declaration
 * (ExtensionRunner.emitContext), which Pi structured-clones for every model
 * request (see MAX_NESTING_DEPTH). (ajv compiles input schemas of up to about
 * 470 nested properties, ~950 levels; a deeper one fails only its own tool,
 * at call time.)
 */
const MAX_DEFINITION_DEPTH = MAX_NESTING_DEPTH;

/** A validated tool with the JSON of its definition (what Pi is given; a change of it re-registers the tool). */
export interface CatalogTool {
  readonly tool: Tool;
  readonly json: string;
}

export interface ToolListRequest {
  readonly server: string;
  readonly timeoutMs: number;
  /** The server's retained log: each tool left out gets a line saying why. */
  readonly log: (text: string) => void;
  /** The settings' `tools.include` / `tools.exclude`. */
  readonly filter?: ToolFilter | undefined;
}

/**
 * The whole tool catalog, paged by explicit cursors (at most 1,000 pages, a
 * repeated cursor is an error), checked tool by tool so one bad tool never
 * hides the others: a tool without a name, one meant for an MCP app only, one
 * with invalid `x-mcp-header` markings (2026-07-28 peers) or a definition
 * nested too deeply is left out, and the settings' filter applies.
 */
export async function listTools(client: Client, request: ToolListRequest): Promise<CatalogTool[]> {
  const leftOut = (tool: Tool, why: string) => request.log(`[pi-mcp] left out tool ${JSON.stringify(tool.name)}: ${why}\n`);
  const tools = await collectPages(`${request.server} tools/list`, async (cursor) => {
    const page = (await client.request({ method: "tools/list", params: cursor === undefined ? {} : { cursor } }, ANY_RESULT, {
      timeout: request.timeoutMs,
    })) as {
      tools?: unknown;
      nextCursor?: string;
    };
    return { items: namedTools(page.tools, request.log).filter((tool) => meantForModel(tool, leftOut)), nextCursor: page.nextCursor };
  });
  const modern = client.getProtocolEra() === "modern";
  const checked: CatalogTool[] = [];
  for (const tool of filterTools(tools, request.filter)) {
    const problem = modern ? invalidHeaderMarking(tool.inputSchema) : undefined;
    if (problem) {
      leftOut(tool, problem);
      continue;
    }
    const json = definitionJson(tool);
    if (typeof json === "string") checked.push({ tool, json });
    else leftOut(tool, json.problem);
  }
  return checked;
}

/** Keeps every tool with a usable name; schemas are checked only when a tool is used. */
function namedTools(value: unknown, log: (text: string) => void): Tool[] {
  if (!Array.isArray(value)) throw new PiMcpError("invalid_response", "tools/list returned no tools array");
  const tools: Tool[] = [];
  for (const tool of value) {
    if (typeof tool === "object" && tool !== null && typeof (tool as Tool).name === "string" && (tool as Tool).name !== "")
      tools.push(tool as Tool);
    else log("[pi-mcp] skipped a tool without a name\n");
  }
  return tools;
}

/**
 * MCP Apps: a tool whose `_meta.ui.visibility` leaves out "model" is meant
 * for the server's app alone (pi-mcp renders no apps), so it is not offered.
 */
function meantForModel(tool: Tool, leftOut: (tool: Tool, why: string) => void): boolean {
  const audiences = visibilityAudiences((tool._meta as { ui?: { visibility?: unknown } } | undefined)?.ui?.visibility);
  if (audiences === "everyone" || audiences?.includes("model")) return true;
  leftOut(
    tool,
    audiences
      ? "its _meta.ui.visibility is for the app only, not the model"
      : "its _meta.ui.visibility names no audience pi-mcp can read, so it is not known to be for the model",
  );
  return false;
}

/**
 * Who a `_meta.ui.visibility` marking is for. Absent or `null` (how many
 * serializers write an unset field): everyone, the spec's default. The
 * documented list, and the shapes a server may mean the same by: one string
 * (`"app"`), or a map of audiences to booleans (`{"model": false}`). Any other
 * value (a number, `true`) cannot say the tool is for the model: undefined,
 * and the tool is not offered (an app's private tool must not reach the model
 * because its marking was misspelt).
 */
function visibilityAudiences(visibility: unknown): "everyone" | readonly string[] | undefined {
  if (visibility === undefined || visibility === null) return "everyone";
  if (typeof visibility === "string") return [visibility];
  if (Array.isArray(visibility)) return visibility.filter((audience): audience is string => typeof audience === "string");
  if (isRecord(visibility)) return Object.keys(visibility).filter((audience) => visibility[audience] === true);
  return undefined;
}

/** `tools.include` keeps only matching tool names (when given); `tools.exclude` then drops matches. */
function filterTools(tools: Tool[], filter: ToolFilter | undefined): Tool[] {
  if (!filter) return tools;
  const include = filter.include ? picomatch([...filter.include], { dot: true }) : () => true;
  const exclude = filter.exclude?.length ? picomatch([...filter.exclude], { dot: true }) : () => false;
  return tools.filter((tool) => include(tool.name) && !exclude(tool.name));
}

/** The definition's JSON, or why it cannot be offered: nested too deeply to serialize safely. */
function definitionJson(tool: Tool): string | { problem: string } {
  let json: string;
  try {
    json = JSON.stringify(tool);
  } catch (error) {
    return { problem: `its definition cannot be serialized (${error instanceof Error ? error.message : String(error)})` };
  }
  // A JSON text nested d levels deep has at least 2d characters: short ones need no scan.
  if (json.length > 2 * MAX_DEFINITION_DEPTH && jsonDepth(json) > MAX_DEFINITION_DEPTH) {
    return { problem: `its definition is nested more than ${MAX_DEFINITION_DEPTH} levels deep` };
  }
  return json;
}

/** The nesting depth of a JSON text, counted without recursion. */
function jsonDepth(json: string): number {
  let depth = 0;
  let max = 0;
  forEachStructuralChar(json, (c) => {
    if (c === 0x7b || c === 0x5b) max = Math.max(max, ++depth);
    else if (c === 0x7d || c === 0x5d) depth--;
  });
  return max;
}

/**
 * What one connection knows of its server's catalog: the validated tools
 * (kept until the next successful listing, also across a reconnect) and the
 * resource lists of the current client.
 */
export class ServerCatalog {
  private toolsValue: readonly CatalogTool[] = [];
  private byName: Map<string, CatalogTool> | undefined;
  /** The server's instructions as its last connection (or the persisted catalog) gave them. */
  instructions: string | undefined;
  /** The current client's resource lists; none while there is no client, or when the server offers no resources. */
  resources: ResourceCatalog | undefined;

  /** The validated tools, in the server's order. */
  get tools(): readonly CatalogTool[] {
    return this.toolsValue;
  }

  set tools(tools: readonly CatalogTool[]) {
    this.toolsValue = tools;
    this.byName = undefined;
  }

  /** The tool of that MCP name, if the catalog has it. */
  tool(name: string): CatalogTool | undefined {
    this.byName ??= new Map(this.toolsValue.map((entry) => [entry.tool.name, entry]));
    return this.byName.get(name);
  }
}
