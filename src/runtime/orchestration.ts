import { Changes, inBackground, settlesWithin } from "../kernel/async.ts";
import type { PluginKernel } from "../kernel/hooks.ts";
import type { ServerEntry } from "../kernel/settings.ts";
import type { HostContext } from "../kernel/types.ts";
import type { CatalogKeeper } from "./catalog-keeper.ts";
import { coalesce } from "./coalesce.ts";
import { CATALOG_COALESCE_MS } from "./catalog-upkeep.ts";
import { type ConnectionEvents, ServerConnection } from "./connection.ts";
import type { ServerIdentities } from "./identities.ts";
import type { ConnectionPool } from "./pool.ts";
import type { ToolBridge } from "./tool-bridge.ts";

/** How long a call of a tool registered from a catalog waits for the host to open its server (only a stuck host start reaches it). */
const OPEN_WAIT_MS = 30_000;

/** What the orchestra reads of its host. */
export interface OrchestraHost {
  readonly kernel: PluginKernel;
  /** The host's context now. */
  context(): HostContext;
  /** Whether `hostStart` has been fired (servers open only after it ran). */
  started(): boolean;
  /** Whether the host was released: nothing reaches Pi any more. */
  released(): boolean;
  /** A server's state changed (Pi's footer shows the status). */
  statusChanged(): void;
}

/**
 * The host's servers at work: a connection per server, opened from the pool,
 * at rest on a known catalog or connecting anew; their state changes bring
 * their catalogs to Pi (at once when a server connects, folded otherwise)
 * and wake whoever waits for them to settle.
 */
export class ServerOrchestra {
  private readonly connections = new Map<string, ServerConnection>();
  /** Servers whose start waits for `hostStart`. */
  private readonly opening = new Set<string>();
  /** Woken at every change of a connection's state (what `settled` waits on). */
  private readonly stateChanges = new Changes();
  private readonly syncTools = coalesce(
    CATALOG_COALESCE_MS,
    () => this.sync(),
    (error) => this.reportToAll("offering the tools to Pi", error),
  );

  constructor(
    private readonly host: OrchestraHost,
    private readonly identities: ServerIdentities,
    private readonly bridge: ToolBridge,
    private readonly keeper: CatalogKeeper,
    /** Where connections wait between sessions of one process; without it nothing is reused. */
    private readonly pool?: ConnectionPool,
  ) {}

  /** Server `name`'s connection (a disabled one too, in state `disabled`). */
  get(name: string): ServerConnection | undefined {
    return this.connections.get(name);
  }

  /** Every connection, by server name. */
  entries(): [string, ServerConnection][] {
    return [...this.connections];
  }

  all(): ServerConnection[] {
    return [...this.connections.values()];
  }

  /** Whether server `name` has a connection or is waiting to be opened. */
  has(name: string): boolean {
    return this.connections.has(name) || this.opening.has(name);
  }

  /** Server `name`'s connection is no longer the host's (it is closed or retained by the caller). */
  remove(name: string): void {
    this.connections.delete(name);
  }

  /**
   * Opens server `name` once `hostStart` has run (a tap that failed: not at
   * all; its failure is the start's to report), as `current` has it then:
   * settings applied while `hostStart` ran may have changed or removed it.
   */
  openAfter(name: string, started: Promise<void>, current: () => ServerEntry | undefined): void {
    this.opening.add(name);
    inBackground(
      async () => {
        const ready = await started.then(
          () => true,
          () => false,
        );
        this.opening.delete(name);
        this.stateChanges.notify();
        const entry = current();
        if (ready && entry && !this.host.released() && !this.connections.has(name)) await this.open(entry);
      },
      (error) => this.connections.get(name)?.logFailure("starting", error),
    );
  }

  /** Resolves once the host has opened server `name` (or was released), bounded; Pi's abort ends the wait. */
  opened(name: string, signal: AbortSignal | undefined): Promise<boolean> {
    return this.stateChanges.until(() => this.host.released() || (this.host.started() && !this.opening.has(name)), OPEN_WAIT_MS, signal);
  }

  /** Takes over a matching connection an earlier session left in the pool, or connects anew. */
  async open(entry: ServerEntry): Promise<void> {
    const { kernel } = this.host;
    const key = this.pool ? this.identities.poolKey(entry) : undefined;
    const pooled = key === undefined ? undefined : this.pool?.take(key);
    const events = this.connectionEvents(() => this.connections.get(entry.name));
    if (pooled) {
      this.connections.set(entry.name, pooled);
      this.keeper.liveTakesOver(entry.name); // the live catalog came along
      await pooled.adopt(kernel, this.host.context(), entry, events);
      return;
    }
    const connection = new ServerConnection(kernel, this.host.context(), entry, events);
    this.connections.set(entry.name, connection);
    connection.rememberEra(this.keeper.knownEra(entry.name)); // a stdio server known to be 2025-era gets initialize alone
    const known = connection.lifecycle === "lazy" ? this.keeper.takeForRest(entry.name) : undefined;
    if (known) {
      // A lazy server whose catalog is known waits for its first use without a process or connection.
      connection.rest(known.catalog, known.instructions);
      return;
    }
    // A lazy server without a catalog connects once to have one; it closes when it has been idle long enough.
    await connection.start();
  }

  private connectionEvents(current: () => ServerConnection | undefined): ConnectionEvents {
    const connected = () => current()?.state === "connected";
    return {
      stateChanged: () => {
        const connection = current();
        // The first attempt has settled: a preloaded catalog gives way to the live one (or goes with a failure).
        if (connection && this.keeper.stateChanged(connection)) this.syncTools.trigger();
        // A server that just connected brings its first catalog: it reaches Pi at once, not a window later.
        if (connected())
          inBackground(
            () => this.sync(),
            (error) => current()?.logFailure("offering the tools to Pi", error),
          );
        else this.syncTools.trigger();
        this.stateChanges.notify();
        inBackground(
          () => this.host.statusChanged(),
          (error) => current()?.logFailure("reporting the status", error),
        );
      },
      // A catalog loaded while connecting is bridged by the "connected" change above; later ones are folded.
      toolsChanged: () => {
        if (connected()) this.syncTools.trigger();
      },
    };
  }

  /**
   * Brings Pi's tools in line with what the servers offer (ToolBridge.sync:
   * new and changed tools registered, unchanged ones left alone, those that
   * went away deactivated); a change is recorded for the next session
   * (persisted catalogs). Nothing once the host was released.
   */
  async sync(): Promise<void> {
    if (this.host.released()) return;
    const { changed, offered } = await this.bridge.sync(() => this.keeper.offered());
    // What a connection found out about its server's era is recorded too: the next session's connect skips the probe.
    if (this.keeper.erasChanged(offered) || changed) this.keeper.changed();
  }

  /** A sync within the folding window (changes that come together make one). */
  syncSoon(): void {
    this.syncTools.trigger();
  }

  /** No folded sync runs any more (the host is released). */
  stopSyncing(): void {
    this.syncTools.cancel();
  }

  /**
   * Waits until no server is still connecting or retrying, then until their
   * tools have reached Pi, all within `timeoutMs` whatever the servers do.
   * Returns whether everything settled in that time.
   */
  async settled(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    const busy = () =>
      this.opening.size > 0 ||
      [...this.connections.values()].some((connection) => connection.state === "connecting" || connection.state === "retrying");
    await this.stateChanges.until(() => !busy(), timeoutMs);
    const flushed = await this.flushTools(deadline - Date.now());
    return flushed && !busy();
  }

  /**
   * Waits until the catalog changes announced so far have reached Pi: the
   * servers' re-lists (folded, then under way; not those held back from a
   * noisy server, nor what is announced meanwhile) and the host's own folded
   * sync. Bounded by `timeoutMs` when given; says whether it got there in time.
   */
  async flushTools(timeoutMs = Number.POSITIVE_INFINITY): Promise<boolean> {
    const flushed = (async () => {
      await Promise.all([...this.connections.values()].map((connection) => connection.catalogSettled()));
      await this.syncTools.caughtUp();
      await this.sync();
    })();
    return settlesWithin(flushed, timeoutMs, (error) => this.reportToAll("offering the tools to Pi", error));
  }

  /** A failure of work for every server (the tool sync) goes to each server's log. */
  reportToAll(what: string, error: unknown): void {
    for (const connection of this.connections.values()) connection.logFailure(what, error);
  }
}
