import type { Client } from "@modelcontextprotocol/client";
import { inBackground } from "../kernel/async.ts";
import { describeError, PiMcpError } from "../kernel/errors.ts";
import type { CatalogItem, OptionalListMethod, ResourceListMethod } from "../kernel/protocol.ts";
import type { ServerEntry } from "../kernel/settings.ts";
import type { ConnectionState } from "../kernel/status.ts";
import type { HostContext } from "../kernel/types.ts";
import { safeText } from "../safety/text.ts";
import type { ConnectAttempt } from "./attempt.ts";
import { listTools, ResourceCatalog, type ServerCatalog } from "./catalog.ts";
import { type Coalesced, coalesce } from "./coalesce.ts";
import { MinuteCounter, RelistPace, toolsChanged } from "./relist.ts";
import type { RetainedLog } from "./retained-log.ts";

/** Catalog notifications are folded into one re-list per window this long (from the first notice of the window). */
export const CATALOG_COALESCE_MS = 50;

/** The side of its connection the catalog upkeep reads (ServerConnection's own members). */
export interface CatalogServer {
  readonly name: string;
  readonly entry: ServerEntry;
  readonly host: HostContext;
  readonly state: ConnectionState;
  readonly requestTimeoutMs: number;
  readonly log: RetainedLog;
  listOptional(client: Client, method: OptionalListMethod, signal?: AbortSignal): Promise<CatalogItem[]>;
  resourceList(method: ResourceListMethod): Promise<readonly CatalogItem[]>;
  describe(error: unknown): string;
  logFailure(what: string, error: unknown): void;
}

/** What only the connection knows of its catalog's upkeep. */
export interface UpkeepHooks {
  /** The connection's current attempt: a listing for any other is superseded. */
  current(): ConnectAttempt | undefined;
  /** The tool catalog was (re)loaded. */
  toolsChanged(): void;
  /** A live connection that stopped working: closed, then retried by the policy. */
  breakDown(error: unknown): Promise<void>;
}

/**
 * Keeps a connection's catalog current: the first listing of a connected
 * client, and the re-lists its change notices ask for (folded per window,
 * paced for a server that never stops announcing changes, counted for status).
 */
export class CatalogUpkeep {
  /** How often change notices may cost a re-list (a server that never stops announcing changes is held back). */
  private readonly toolsPace = new RelistPace();
  private readonly resourcesPace = new RelistPace();
  /** Change notices of the last minute (for status: a noisy server says how noisy). */
  readonly notices = new MinuteCounter();
  private readonly refreshTools: Coalesced;
  private readonly refreshResources: Coalesced;
  private readonly server: CatalogServer;
  private readonly hooks: UpkeepHooks;
  private readonly catalog: ServerCatalog;

  constructor(server: CatalogServer, hooks: UpkeepHooks, catalog: ServerCatalog) {
    this.server = server;
    this.hooks = hooks;
    this.catalog = catalog;
    const report = (what: string) => (error: unknown) => server.logFailure(what, error);
    this.refreshTools = coalesce(CATALOG_COALESCE_MS, () => this.reloadTools(), report("re-listing the tools"), {
      pace: () => this.toolsPace.next(),
    });
    this.refreshResources = coalesce(
      CATALOG_COALESCE_MS,
      async () => {
        const changed = await this.catalog.resources?.refresh();
        this.resourcesPace.found(changed ?? false);
      },
      report("re-listing the resources"),
      { pace: () => this.resourcesPace.next() },
    );
  }

  /** The paces of the tool and resource re-lists (for status). */
  get paces(): readonly RelistPace[] {
    return [this.toolsPace, this.resourcesPace];
  }

  /** A change notice of the current attempt's server. */
  noticed(list: "tools" | "resources"): void {
    this.notices.add();
    (list === "tools" ? this.refreshTools : this.refreshResources).trigger();
  }

  /** No tool re-list any more (the connection closes). */
  cancel(): void {
    this.refreshTools.cancel();
  }

  /**
   * Resolves once the tool-list changes announced so far have been re-listed
   * (a re-list under way or folded in its window; not one the pace holds
   * back, nor what the server announces meanwhile).
   */
  settled(): Promise<void> {
    return this.refreshTools.caughtUp();
  }

  /** The catalogs of `attempt`'s client as it connects: the tools, and the resources in the background. */
  async load(attempt: ConnectAttempt, client: Client, named: (error: unknown) => unknown): Promise<void> {
    if (client.getServerCapabilities()?.resources) {
      // Listed now, beside the tools, but not waited for: resources are optional, so a slow or failing
      // listing never holds the connection up; its readers (and `test`) wait for it, and it stays cached.
      const catalog = new ResourceCatalog((method) => this.server.listOptional(client, method));
      this.catalog.resources = catalog;
      inBackground(
        () => catalog.load(),
        (error) => this.server.logFailure("listing the resources", error),
      );
    }
    await this.loadTools(attempt).catch((error: unknown) => Promise.reject(named(error)));
  }

  /**
   * The re-list a change notice asks for. It is the connect's own catalog
   * request, so a failure on a live connection is handled like a failed
   * connect: the connection is closed and retried by the policy (`retrying`).
   * A connection that closed meanwhile is already handled by `lost()`.
   */
  private async reloadTools(): Promise<void> {
    const attempt = this.hooks.current();
    try {
      const changed = await this.loadTools(attempt);
      if (changed !== undefined) this.toolsPace.found(changed);
    } catch (error) {
      const current = attempt === this.hooks.current();
      this.server.logFailure("re-listing the tools after a change notice", error);
      if (!current || this.server.state !== "connected") return;
      await this.hooks.breakDown(
        new PiMcpError("connection_failed", `tools/list failed after a change notice: ${this.server.describe(error)}`, { cause: error }),
      );
    }
  }

  /**
   * Lists the tools; says whether the list changed (undefined: nothing was
   * listed, or the connection moved on meanwhile). A list that came back as
   * it was is no change: nothing is registered, synced or recorded.
   */
  private async loadTools(attempt: ConnectAttempt | undefined): Promise<boolean | undefined> {
    const server = this.server;
    // The current attempt's client (the one listed for: `attempt`, while it is current).
    const client = this.hooks.current()?.client;
    if (!client?.getServerCapabilities()?.tools) return undefined;
    const tools = await listTools(client, {
      server: server.name,
      timeoutMs: server.requestTimeoutMs,
      log: (text) => server.log.append(text),
      filter: server.entry.definition?.tools,
    });
    if (attempt !== this.hooks.current()) return undefined;
    if (!toolsChanged(this.catalog.tools, tools)) return false;
    this.catalog.tools = tools;
    this.hooks.toolsChanged();
    return true;
  }

  /**
   * Complete catalog sizes for `test`: every page of each list the server
   * supports (resources and templates from the connection's catalog). A list
   * the server does not implement counts zero; so does one that fails, as in
   * Pi (the server and its tools stay usable, only that listing fails), and
   * `failed` hears why, in words that name the method.
   */
  async counts(client: Client, failed: (problem: string) => void): Promise<CatalogCounts> {
    const server = this.server;
    const counted = (list: Promise<readonly CatalogItem[]>) =>
      list.catch((error: unknown) => {
        failed(safeText(describeError(error), server.host.redact));
        return [];
      });
    const [resources, resourceTemplates, prompts] = await Promise.all([
      counted(server.resourceList("resources/list")),
      counted(server.resourceList("resources/templates/list")),
      counted(client.getServerCapabilities()?.prompts ? server.listOptional(client, "prompts/list") : Promise.resolve([])),
    ]);
    return {
      tools: this.catalog.tools.length,
      resources: resources.length,
      resourceTemplates: resourceTemplates.length,
      prompts: prompts.length,
    };
  }
}

export interface CatalogCounts {
  tools: number;
  resources: number;
  resourceTemplates: number;
  prompts: number;
}
