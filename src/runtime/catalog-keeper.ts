import type { EffectiveConfig } from "../kernel/settings.ts";
import { firstRequestWaitOf } from "../kernel/settings.ts";
import type { HostContext } from "../kernel/types.ts";
import type { CachedServer, CachedStart } from "./catalog-cache.ts";
import type { SnapshotServer, StartSnapshot } from "./catalog-store.ts";
import { coalesce } from "./coalesce.ts";
import type { ServerConnection } from "./connection.ts";
import type { EraVerdict } from "./era.ts";
import type { ServerIdentities } from "./identities.ts";
import type { ConnectionPool } from "./pool.ts";
import type { Offered, ToolBridge } from "./tool-bridge.ts";

/** What a replaced session knows at handoff. */
export interface Handoff {
  /** The settings as they are now (re-read by the caller): a connection whose definition changed is closed, not retained. */
  readonly settings?: EffectiveConfig;
  /** The settings stamp of those settings (src/config/settings-stamp.ts): what the next session's Pi entry compares to take the handover. */
  readonly stamp?: string;
}

/**
 * The host's persisted catalogs (Pi only): what Pi was given while it loaded
 * the extension, and where the host records what it offers for the next
 * session with the same settings.
 */
export interface HostCatalogs {
  /** The tools the Pi entry registered at load: each server's are offered only while its catalog identity matches. */
  readonly preloaded?: CachedStart;
  /** The settings stamp of the host's current settings; undefined when it is not known (nothing is recorded then). */
  stamp(): string | undefined;
  /** Records what the host offers (the store writes only what changed). */
  save(snapshot: StartSnapshot): Promise<void>;
}

/** What the keeper reads of its host. */
export interface KeeperHost {
  /** The host's context now (its config is the host's current settings, its redactor the newest one). */
  context(): HostContext;
  /** The connection of server `name`, if the host has one. */
  server(name: string): ServerConnection | undefined;
  /** The system prompt with the host's Instruction Snapshot after `base`. */
  systemPrompt(base: string): string;
  /** A failure of the keeper's background work, for every server's log. */
  report(what: string, error: unknown): void;
}

/** Changes of what is offered are recorded once per window (servers connecting together make one write). */
const PERSIST_WINDOW_MS = 250;
/** A text no system prompt starts with: what the hook adds after it is the Instruction Snapshot's text. */
const PROMPT_BASE = "\u0000pi-mcp: the system prompt before the Instruction Snapshot\u0000";

/**
 * Which catalog each server offers Pi (its live one, the one it keeps, or the
 * one Pi was given at load), and what is kept of them for the next session:
 * the catalogs Pi was given at load (preloaded) until each is reconciled, the
 * servers whose preloaded catalog was stale, the record for the next session
 * with the same settings (saved) and the handover to the next session of the
 * same Pi process (through the pool).
 */
export class CatalogKeeper {
  /**
   * Servers whose catalog Pi was given at load and that have not been
   * reconciled yet: offered while the server is not configured to be checked
   * yet, or its first connection is still under way; dropped when the
   * catalog's identity no longer matches the server's (settings or
   * credentials changed), when the server connects (its live catalog takes
   * over) or when it fails.
   */
  private readonly preloaded = new Map<string, CachedServer>();
  /** Servers whose preloaded catalog was dropped because it belongs to other settings or credentials. */
  private readonly stale = new Set<string>();
  private readonly persist = coalesce(
    PERSIST_WINDOW_MS,
    () => this.save(),
    (error) => this.host.report("keeping the catalogs", error),
  );
  /** Whether an offered catalog changed since it was last recorded. */
  private persistDue: boolean;
  /** The era verdicts of the offered servers when they were last compared (see erasChanged). */
  private syncedEras: string;

  constructor(
    private readonly host: KeeperHost,
    private readonly identities: ServerIdentities,
    private readonly bridge: ToolBridge,
    /** Where connections and the handover wait between sessions of one process; without it nothing is handed over. */
    private readonly pool?: ConnectionPool,
    /** Persisted catalogs (Pi only); without them nothing is preloaded or recorded. */
    private readonly catalogs?: HostCatalogs,
  ) {
    for (const server of catalogs?.preloaded?.servers ?? []) this.preloaded.set(server.name, server);
    // A start with no record of these settings leaves one (an empty one too): the next start then knows what to expect.
    this.persistDue = catalogs !== undefined && catalogs.preloaded === undefined;
    // What Pi was given at load (the host's connections do not exist yet).
    this.syncedEras = erasText(this.preloadedServers().map((server) => [server.name, server.era]));
  }

  private get config(): EffectiveConfig {
    return this.host.context().config;
  }

  /** The catalogs Pi was given at load that are not reconciled yet. */
  preloadedServers(): CachedServer[] {
    return [...this.preloaded.values()];
  }

  /**
   * Drops every preloaded catalog that is no longer its server's: the server
   * is not configured or enabled any more (or the settings are invalid), or
   * the catalog identity (definition, credentials, capabilities, project,
   * trust) differs from the server's now. Says which are kept, or undefined
   * when none was left to check.
   */
  verify(): readonly CachedServer[] | undefined {
    if (this.preloaded.size === 0) return undefined;
    const entries = new Map(
      this.config.valid ? this.config.servers.filter((entry) => entry.enabled && !entry.masked).map((entry) => [entry.name, entry]) : [],
    );
    for (const [name, server] of [...this.preloaded]) {
      const entry = entries.get(name);
      const identity = entry && this.identities.catalog(entry);
      if (identity !== undefined && server.matches(identity)) continue;
      this.preloaded.delete(name);
      if (entry) this.stale.add(name);
    }
    return this.preloadedServers();
  }

  /** The era verdict kept with server `name`'s preloaded catalog (era.ts): a connection opened now starts from it. */
  knownEra(name: string): EraVerdict | undefined {
    return this.preloaded.get(name)?.era;
  }

  /**
   * Whether the era verdicts of the servers `offered` changed since the last
   * time (a connection found out its server's era, or it changed): what is
   * recorded should change with them.
   */
  erasChanged(offered: readonly Offered[]): boolean {
    const eras = this.erasOf(offered);
    const changed = eras !== this.syncedEras;
    this.syncedEras = eras;
    return changed;
  }

  /** A server's era verdict: its connection's (which starts from the known one), or the one kept with its preloaded catalog. */
  private eraOf(name: string): EraVerdict | undefined {
    return this.host.server(name)?.era ?? this.knownEra(name);
  }

  private erasOf(offered: readonly Offered[]): string {
    return erasText(offered.map(({ entry }) => [entry.name, this.eraOf(entry.name)]));
  }

  /** Server `name`'s live catalog came along with a pooled connection: its preloaded one goes. */
  liveTakesOver(name: string): void {
    this.preloaded.delete(name);
  }

  /** Server `name`'s preloaded catalog, taken to rest on (a lazy server waits for its first use with it). */
  takeForRest(name: string): CachedServer | undefined {
    const known = this.preloaded.get(name);
    this.preloaded.delete(name);
    return known;
  }

  /**
   * A change of `connection`'s state: once its first attempt has settled, a
   * preloaded catalog gives way to the live one (or goes with a failure);
   * once connected, its catalog is its own again. Says whether a preloaded
   * catalog went.
   */
  stateChanged(connection: ServerConnection): boolean {
    const gone = connection.state !== "connecting" && connection.state !== "idle" && this.preloaded.delete(connection.name);
    if (connection.state === "connected") this.stale.delete(connection.name);
    return gone;
  }

  /** Whether server `name`'s preloaded catalog was dropped because it belongs to other settings or credentials. */
  isStale(name: string): boolean {
    return this.stale.has(name);
  }

  /**
   * What each server offers Pi now: a connected server its live catalog; a
   * lazy server that is idle the catalog it keeps (from its last connection
   * or a persisted catalog); a server reconnecting after an unexpected close
   * the catalog it had (and its instructions stay in the Instruction
   * Snapshot: its tools are still its tools; once it fails they go); a
   * server whose first connection is still under way the catalog Pi was
   * given at load (preloaded), if it is still its own.
   */
  offered(): Offered[] {
    if (!this.config.valid) return [];
    const offered: Offered[] = [];
    for (const entry of this.config.servers) {
      if (entry.masked || !entry.enabled) continue;
      const connection = this.host.server(entry.name);
      if (connection?.offersCatalog) {
        offered.push({ entry, catalog: connection.catalog.tools, instructions: connection.instructions() });
        continue;
      }
      const known = this.preloaded.get(entry.name);
      if (known && (!connection || connection.state === "connecting"))
        offered.push({ entry, catalog: known.catalog, instructions: known.instructions });
    }
    return offered;
  }

  /** What is offered changed (Pi's tools or the Instruction Snapshot): it is recorded for the next session, once per window. */
  changed(): void {
    if (!this.catalogs) return;
    this.persistDue = true;
    this.persist.trigger();
  }

  /** Records a change not recorded yet now (a server that connected just before Pi quits is known next time). */
  async flush(): Promise<void> {
    this.persist.cancel();
    await this.save().catch((error: unknown) => this.host.report("keeping the catalogs", error));
  }

  /**
   * Leaves what this session offers Pi to the next session of this Pi
   * process (through the pool): its Pi entry registers those tools while Pi
   * loads it, when its settings stamp is the handoff's. Only servers whose
   * definition is still the one in the settings re-read at handoff are in it.
   */
  handOver(handoff: Handoff): void {
    if (!this.pool || !this.catalogs || !handoff.stamp) return;
    const snapshot = this.snapshot(handoff.stamp, handoff.settings ?? this.config);
    const servers: CachedServer[] = snapshot.servers.map(({ identity, ...server }) => ({
      ...server,
      matches: (candidate) => candidate === identity,
    }));
    const trusted = (handoff.settings ?? this.config).sources.projectTrusted;
    this.pool.handOver({
      digest: handoff.stamp,
      cwd: this.host.context().cwd,
      trusted,
      at: Date.now(),
      start: { source: "pool", servers, ...(snapshot.prompt !== undefined && { prompt: snapshot.prompt }), complete: snapshot.complete },
    });
  }

  /**
   * What the host offers, as the next session with the same settings stamp
   * should find it: each offered server's catalog (under its identity), the
   * tools Pi has of it, and the Instruction Snapshot's text. A server whose
   * catalog holds a value resolved from the settings is left out (no
   * resolved value is ever stored).
   */
  private snapshot(digest: string, config: EffectiveConfig = this.config): StartSnapshot {
    const secrets = [...(this.host.context().redact.secrets ?? [])].filter((secret) => secret.length >= 4);
    const holdsSecret = (text: string | undefined) =>
      text !== undefined && secrets.some((secret) => text.includes(secret) || text.includes(JSON.stringify(secret).slice(1, -1)));
    const servers: SnapshotServer[] = [];
    /** Whether a server offered now is left out: the system prompt, built from every offered server, is then not kept either. */
    let leftOut = false;
    for (const { entry, catalog, instructions } of this.offered()) {
      const era = this.eraOf(entry.name);
      const current = config.servers.find((candidate) => candidate.name === entry.name && !candidate.masked);
      const identity = this.identities.catalog(entry);
      // Settings re-read at handoff that changed this server: its catalog is not the next session's.
      if (identity === undefined || !current || this.identities.catalog(current, config) !== identity) {
        leftOut = true;
        continue;
      }
      if (holdsSecret(instructions) || catalog.some(({ json }) => holdsSecret(json))) {
        this.host
          .server(entry.name)
          ?.log.append("[pi-mcp] its catalog holds a value resolved from the settings: it is not kept for the next session\n");
        leftOut = true;
        continue;
      }
      const tools = catalog.flatMap(({ tool, json }) => {
        const piName = this.bridge.activeName(entry.name, tool.name);
        const exposure = piName === undefined ? undefined : this.bridge.registeredExposure(piName);
        return piName !== undefined && exposure !== undefined ? [{ piName, exposure, tool, json }] : [];
      });
      servers.push({
        name: entry.name,
        identity,
        catalog,
        tools,
        ...(instructions !== undefined && { instructions }),
        counts: { tools: catalog.length },
        ...(era && { era }),
      });
    }
    const prompt = this.host.systemPrompt(PROMPT_BASE);
    const keepPrompt = !leftOut && prompt.startsWith(PROMPT_BASE) && !holdsSecret(prompt);
    return { digest, ...(keepPrompt && { prompt: prompt.slice(PROMPT_BASE.length) }), servers, complete: this.covers(servers, config) };
  }

  /**
   * Whether `servers` cover every server the first model request of a run
   * without a terminal UI would wait for (src/runtime/first-request.ts): each
   * one it may wait for is among them, or is waiting for authorization.
   */
  private covers(servers: readonly SnapshotServer[], config: EffectiveConfig): boolean {
    if (!config.valid) return false;
    const recorded = new Set(servers.map((server) => server.name));
    const authorizing = (name: string) => {
      const state = this.host.server(name)?.state;
      return state === "needs_auth" || state === "needs_client_registration";
    };
    return config.servers.every((entry) => firstRequestWaitOf(config, entry) === 0 || recorded.has(entry.name) || authorizing(entry.name));
  }

  /** Records what is offered, when it changed since the last time and the settings stamp is known. */
  private async save(): Promise<void> {
    const digest = this.catalogs?.stamp();
    if (!this.persistDue || !digest || !this.config.valid) return;
    this.persistDue = false;
    await this.catalogs!.save(this.snapshot(digest));
  }
}

/** Servers' era verdicts as one comparable text, in name order. */
function erasText(eras: (readonly [string, EraVerdict | undefined])[]): string {
  return JSON.stringify(eras.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
