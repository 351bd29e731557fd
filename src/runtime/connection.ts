import type { Client } from "@modelcontextprotocol/client";
import type { Lifecycle, ServerEntry } from "../kernel/settings.ts";
import type { ConnectionState, ConnectionStatus } from "../kernel/status.ts";
import type { LiveServer, RequestOptions } from "../kernel/host.ts";
import { describeError, PiMcpError } from "../kernel/errors.ts";
import type { PluginKernel } from "../kernel/hooks.ts";
import type { ConnectionContext, HostContext, LiveConnection } from "../kernel/types.ts";
import type { CallScope } from "../kernel/services.ts";
import { safeHead } from "../safety/text.ts";
import { ConnectionCredentials } from "./credentials.ts";
import { Changes, inBackground } from "../kernel/async.ts";
import { authStateOf, classifyFailure, isConnectionLost, isExpiredSession, type Reconnection } from "./errors.ts";
import type { CatalogItem, OptionalListMethod, ResourceListMethod } from "../kernel/protocol.ts";
import { ServerCatalog, type CatalogTool } from "./catalog.ts";
import { type CatalogCounts, CatalogUpkeep } from "./catalog-upkeep.ts";
import { serverSetting } from "./server-settings.ts";
import { RetainedLog } from "./retained-log.ts";
import { reconnectWaitMs, retryWords } from "./reconnect.ts";
import type { EraVerdict } from "./era.ts";
import { RetryBook } from "./retries.ts";
import { connectionStatus, notConnected } from "./connection-status.ts";
import { ServerRequests } from "./requests.ts";
import { IdleCountdown } from "./idle.ts";
import { type AttemptSeat, ConnectAttempt } from "./attempt.ts";

export interface ConnectionEvents {
  /** Any change a status display cares about. */
  stateChanged(connection: ServerConnection): void;
  /** The tool catalog was (re)loaded. */
  toolsChanged(connection: ServerConnection): void;
}

/**
 * One server definition's connection: connects, loads the tool catalog,
 * retries by the shared policy, and closes. Failures never leave it.
 */
export class ServerConnection implements LiveServer {
  private logValue = new RetainedLog();
  /**
   * The attempt the connection supervises (its client, transport and
   * process): an attempt that is not this one any more is superseded. None
   * once closed on purpose (`close`, an idle lazy server) until the next.
   */
  private current: ConnectAttempt | undefined;
  private stateValue: ConnectionState;
  /** Attempts of the current run of retries, when it last connected, the retry scheduled. */
  private readonly retries = new RetryBook();
  private causeText: string | undefined;
  /**
   * Whether the connection is getting back after an unexpected close (it was
   * connected): retrying or connecting again. Its catalog stays offered, and
   * requests wait for the reconnect. Cleared by any state that ends it.
   */
  private reconnecting = false;
  /** While reconnecting: why the connection closed (the crash), whatever its retries' own failures say since. */
  private lostCauseText: string | undefined;
  /**
   * Closed on purpose (`close`): no attempt begins (a retry, a renewed
   * session) until `start`. The connection's own lifetime, not whether an
   * attempt is current (a close also ends the current attempt).
   */
  private closed = false;
  /** What the newest client was authenticated with (for a handoff), and the sink of the SDK's output redacted with it. */
  private readonly credentials = new ConnectionCredentials(
    () => this.logValue,
    () => this.host.redact,
  );
  /** The server's catalog (validated tools, resource lists), kept with the connection (and across handoff). */
  private readonly catalogValue = new ServerCatalog();
  /** That the server speaks the 2025 era only, as a probe found (stdio): later connects skip the probe (see era.ts). */
  private eraValue: EraVerdict | undefined;
  /** How requests are sent: the wait for the connection, session recovery, named failures, paged optional lists. */
  private readonly requests = new ServerRequests(this, {
    mustWait: () => this.stateValue === "idle" || this.reconnecting,
    inUse: () => this.idle.inUse(),
  });
  /** Tool calls in flight, newest last: server requests are answered in their scope. */
  private readonly calls: CallScope[] = [];
  /** The first listing of a connected client, and the re-lists its change notices ask for. */
  private readonly upkeep = new CatalogUpkeep(
    this,
    {
      current: () => this.current,
      toolsChanged: () => this.events.toolsChanged(this),
      breakDown: (error) => this.breakDown(error),
    },
    this.catalogValue,
  );
  /**
   * Which session's host owns the connection (a token of its own per owner):
   * handlers of an earlier owner see `isCurrent()` false. None while the
   * connection waits in the pool between two sessions.
   */
  private owner: object | undefined = {};
  /** When a later session took this connection over from an earlier one. */
  private reusedAt: number | undefined;
  private contextValue: ConnectionContext;
  private entryValue: ServerEntry;
  /** Woken at every state change (what `connected()` waits on). */
  private readonly stateChanges = new Changes();
  /** A lazy server's countdown to closing, while nothing uses it. */
  private readonly idle = new IdleCountdown({
    mayCountDown: () => this.lifecycle === "lazy" && this.stateValue === "connected" && !this.pooled && this.calls.length === 0,
    unused: () => this.stateValue === "connected" && this.calls.length === 0,
    timeoutMs: () => this.idleTimeoutMs,
    close: () => this.closeIdle(),
    report: this.report("closing the idle server"),
  });

  constructor(
    private kernel: PluginKernel,
    private hostValue: HostContext,
    entry: ServerEntry,
    private events: ConnectionEvents,
  ) {
    this.entryValue = entry;
    this.stateValue = entry.enabled ? "connecting" : "disabled";
    this.contextValue = this.makeContext();
  }

  private makeContext(): ConnectionContext {
    return { host: this.hostValue, server: this.entryValue, log: (text) => this.logValue.append(text), retainedLog: this.logValue };
  }

  get entry(): ServerEntry {
    return this.entryValue;
  }

  /**
   * Settings applied in the session that keep this connection (its definition
   * is the same apart from its root folders, and so are its capabilities): it
   * reads the new settings from now on, and plugins hear of it (the roots
   * plugin tells the server when its roots changed).
   */
  update(host: HostContext, entry: ServerEntry): void {
    this.hostValue = host;
    this.entryValue = entry;
    this.contextValue = this.makeContext();
    const attempt = this.current;
    if (this.stateValue === "connected" && attempt?.client && !this.pooled) this.kernel.hooks.connectionUpdated.call(this.live(attempt));
  }

  get host(): HostContext {
    return this.hostValue;
  }

  get context(): ConnectionContext {
    return this.contextValue;
  }

  /** The server's retained log for the owning session (stderr and MCP logging). */
  get log(): RetainedLog {
    return this.logValue;
  }

  /**
   * Hands the live connection to the pool when its session is replaced: the
   * old session's handlers stop receiving anything, and nothing is reported to
   * its host any more. The client, its process and its catalog stay.
   */
  release(): void {
    this.owner = undefined;
    this.idle.disarm();
    this.events = { stateChanged() {}, toolsChanged() {} };
  }

  /**
   * A new session takes a pooled connection over: its kernel's plugins register
   * their handlers on the client again, and it gets a fresh log. No second
   * initialize and no new list round trip: the catalog travels along.
   */
  async adopt(kernel: PluginKernel, host: HostContext, entry: ServerEntry, events: ConnectionEvents): Promise<void> {
    this.kernel = kernel;
    this.hostValue = host;
    this.entryValue = entry; // the same definition, but perhaps other root folders
    this.events = events;
    this.logValue = new RetainedLog();
    this.contextValue = this.makeContext();
    this.owner = {};
    this.reusedAt = Date.now();
    const live = this.live(this.current!);
    kernel.hooks.clientCreated.call(live);
    events.stateChanged(this);
    events.toolsChanged(this);
    this.idle.arm();
    await kernel.hooks.serverConnected.promise(live);
  }

  /**
   * Whether the stored credentials are still the ones this client was built
   * with (re-read now): after a logout or a new `auth`, even in another
   * terminal, a retained client must not carry the old ones to a new session.
   */
  stillAuthorizedAsBuilt(): boolean {
    return this.credentials.stillAsBuilt(this.kernel, this.context);
  }

  /** The server process's id as soon as it was started (also while it is still starting), for a kill that must not miss it. */
  get processId(): number | undefined {
    return this.current?.processId;
  }

  /** Whether the pool may keep this connection for the next session. */
  get reusable(): boolean {
    // A connection closed on purpose has no current attempt.
    return this.stateValue === "connected" && this.current?.client !== undefined;
  }

  get name(): string {
    return this.entry.name;
  }

  get state(): ConnectionState {
    return this.stateValue;
  }

  /** What a probe found out about a stdio server's era (kept with the known catalog), if anything. */
  get era(): EraVerdict | undefined {
    return this.eraValue;
  }

  /** The era the server's known catalog remembers; what this connection finds out itself replaces it. */
  rememberEra(verdict: EraVerdict | undefined): void {
    this.eraValue ??= verdict;
  }

  /** What the connection knows of its server's catalog: the validated tools and the resource lists. */
  get catalog(): ServerCatalog {
    return this.catalogValue;
  }

  /** The server's request timeout (its own setting, else the global one), never past the request deadline. */
  get requestTimeoutMs(): number {
    return Math.min(serverSetting(this.context, "requestTimeoutMs"), this.requestDeadlineMs);
  }

  /** The most one request may take in all, progress or not (its own setting, else the global one). */
  get requestDeadlineMs(): number {
    return serverSetting(this.context, "requestDeadlineMs");
  }

  /** While the connection waits in the pool between two sessions (nobody owns it). */
  private get pooled(): boolean {
    return this.owner === undefined;
  }

  private get connectTimeoutMs(): number {
    return serverSetting(this.context, "connectTimeoutMs");
  }

  /** When the server runs: `eager` (from the session's start) or `lazy` (when something needs it; closed when idle). */
  get lifecycle(): Lifecycle {
    return serverSetting(this.context, "lifecycle");
  }

  private get idleTimeoutMs(): number {
    return serverSetting(this.context, "idleTimeoutMs");
  }

  /**
   * A lazy server whose catalog is known (from a persisted catalog) waits
   * without a process or connection: its tools are offered, and the first
   * one called (or a command that needs the server) starts it.
   */
  rest(tools: readonly CatalogTool[], instructions: string | undefined): void {
    this.catalogValue.tools = tools;
    this.catalogValue.instructions = instructions;
    this.setState("idle");
  }

  /** Starts a lazy server that is idle (its first use); any other state is left as it is. */
  private wake(): void {
    if (this.stateValue === "idle") inBackground(() => this.start(), this.report("starting the lazy server"));
  }

  /** The idle time ran out: the process or connection goes; the catalog stays, and the next use starts the server again. */
  private async closeIdle(): Promise<void> {
    const attempt = this.current;
    this.current = undefined;
    this.upkeep.cancel();
    this.log.append(`[pi-mcp] closed after ${this.idleTimeoutMs} ms without use (lazy); the next use starts it again\n`);
    await this.drop(attempt);
    this.setState("idle");
  }

  status(): ConnectionStatus {
    return connectionStatus({
      host: this.hostValue,
      entry: this.entryValue,
      state: this.stateValue,
      attempts: this.retries.attempts,
      nextRetryAt: this.retries.nextRetryAt,
      cause: this.causeText,
      client: this.current?.client,
      catalog: this.catalogValue,
      connectedAt: this.retries.connectedAt,
      pid: this.current?.shownPid,
      reusedAt: this.reusedAt,
      lifecycle: this.lifecycle,
      idleTimeoutMs: this.idleTimeoutMs,
      paces: this.upkeep.paces,
      notices: this.upkeep.notices,
    });
  }

  /** The connected client, or an error that says why there is none (for a server reconnecting: the close and the retry). */
  requireClient(): Client {
    const client = this.current?.client;
    if (this.stateValue === "connected" && client) return client;
    throw notConnected(this.name, this.stateValue, this.causeText, this.reconnection);
  }

  /** While the server reconnects after an unexpected close: why it closed, the retry in progress and why the last retry failed; undefined otherwise. */
  get reconnection(): Reconnection | undefined {
    if (!this.reconnecting) return undefined;
    const retry = retryWords({
      state: this.stateValue,
      attempts: this.retries.attempts,
      maxRetries: this.host.config.retry.maxRetries,
      ...(this.retries.nextRetryAt !== undefined && { nextRetryAt: this.retries.nextRetryAt }),
    });
    const cause = this.lostCauseText ?? this.causeText;
    const lastFailure = this.causeText !== cause ? this.causeText : undefined;
    return { ...(cause !== undefined && { cause }), retry, ...(lastFailure !== undefined && { lastFailure }) };
  }

  /**
   * Whether the host offers this server's catalog to Pi: while it is
   * connected, idle (lazy), or reconnecting after an unexpected close (the
   * tools it had are still its tools; a call waits for the reconnect). Not
   * once it failed, nor while a first connection is under way.
   */
  get offersCatalog(): boolean {
    return this.stateValue === "connected" || this.stateValue === "idle" || this.reconnecting;
  }

  /** The server's instructions while its tools are offered: from the live client, or as its catalog keeps them (idle, reconnecting). */
  instructions(): string | undefined {
    if (this.stateValue === "connected") return this.current?.client?.getInstructions();
    return this.offersCatalog ? this.catalogValue.instructions : undefined;
  }

  /** Marks a tool call in flight; returns the function that ends it. */
  enterCall(scope: CallScope): () => void {
    this.calls.push(scope);
    this.idle.disarm();
    return () => {
      const index = this.calls.lastIndexOf(scope);
      if (index !== -1) this.calls.splice(index, 1);
      this.idle.arm();
    };
  }

  /** The newest tool call still in flight (an aborted one no longer counts). */
  activeCall(): CallScope | undefined {
    return this.calls.findLast((scope) => !scope.signal?.aborted);
  }

  /** Starts connecting; resolves when this attempt (not its retries) has settled. */
  async start(): Promise<void> {
    if (!this.entry.enabled || !this.entry.definition) return;
    this.closed = false;
    this.retries.restart();
    await this.attempt();
  }

  private async attempt(): Promise<void> {
    if (this.closed) return;
    const attempt = new ConnectAttempt(this.seat);
    this.current = attempt;
    this.retries.begin();
    // /mcp logs shows where each attempt begins.
    // On a line of its own, even after a server line that did not end (a process that stopped mid-line).
    this.log.append(
      `${this.log.endsLine ? "" : "\n"}[pi-mcp] ── connection attempt ${this.retries.attempts} at ${new Date().toISOString()} ──\n`,
    );
    this.setState("connecting");
    try {
      await attempt.open();
      if (attempt !== this.current) return await attempt.close("superseded");
      this.retries.connected();
      this.causeText = undefined;
      this.catalogValue.instructions = attempt.client?.getInstructions();
      this.setState("connected");
      this.idle.arm();
      await this.kernel.hooks.serverConnected.promise(this.live(attempt));
    } catch (error) {
      if (attempt !== this.current) return await attempt.close("superseded");
      // Read before the transport closes: how the process ended, what it wrote last.
      const cause = attempt.explainFailure(error);
      await this.drop(attempt);
      // A plugin that failed once connected: the attempts count as for a connection that broke.
      if (this.stateValue === "connected") this.retries.broke();
      // Lost while it started because the transport closed it (a message over the size cap): that is the cause.
      if (isConnectionLost(error) && attempt.closeCause) this.fail(attempt.closeCause);
      else this.fail(error, cause);
    }
  }

  private fail(error: unknown, cause = this.describe(error)): void {
    this.causeText = cause;
    const kind = error instanceof PiMcpError && error.code === "invalid_settings" ? "terminal" : classifyFailure(error);
    if (kind === "auth") return void this.setState("needs_auth");
    if (kind === "client_registration") return void this.setState("needs_client_registration");
    const delay = kind === "retryable" ? this.retries.delayMs(this.host.config.retry) : undefined;
    if (delay === undefined) return void this.setState("failed");
    this.retries.plan(delay);
    this.setState("retrying");
    this.retries.schedule(delay, () => this.attempt(), this.report("reconnecting"));
  }

  /** What the attempts read of this connection, and report to it. */
  private readonly seat: AttemptSeat = {
    kernel: () => this.kernel,
    context: () => this.context,
    isCurrent: (attempt) => attempt === this.current,
    sdkSink: this.credentials.sdkSink,
    authenticate: () => this.credentials.authenticate(this.kernel, this.context),
    era: () => this.eraValue,
    setEra: (verdict) => {
      this.eraValue = verdict;
    },
    noticed: (list) => this.upkeep.noticed(list),
    clientOpened: (attempt) => {
      this.reusedAt = undefined; // a connection of its own from now on
      this.catalogValue.resources = undefined;
      this.requests.newClient();
      this.kernel.hooks.clientCreated.call(this.live(attempt));
    },
    loadCatalogs: (attempt, client) => this.upkeep.load(attempt, client, (error) => this.requests.namedListFailure(error)),
    lost: (attempt) => this.lost(attempt),
    log: (text) => this.log.append(text),
    describe: (error) => this.describe(error),
    report: (what) => this.report(what),
  };
  /** Every page of an optional list (resources, templates, prompts); -32601: none (see ServerRequests.listOptional). */
  listOptional(client: Client, method: OptionalListMethod, signal?: AbortSignal): Promise<CatalogItem[]> {
    return this.requests.listOptional(client, method, signal);
  }

  /** A cached resource list: empty when the server offers no resources; fetched again when the last attempt failed. */
  resourceList(method: ResourceListMethod): Promise<readonly CatalogItem[]> {
    return this.catalogValue.resources?.get(method) ?? Promise.resolve([]);
  }

  /** An unexpected close (a crash, a dropped connection) reconnects by the retry policy. */
  private lost(attempt: ConnectAttempt): void {
    if (attempt !== this.current) return;
    if (this.pooled) {
      inBackground(() => this.close(), this.report("closing")); // nobody owns it: the pool drops it, nothing retries
      return;
    }
    attempt.forget();
    this.catalogValue.resources = undefined;
    if (this.stateValue === "connecting") return; // the attempt is still loading the catalogs: it fails itself
    this.retries.broke();
    this.reconnecting = true;
    // The transport closed it for a reason of its own (a message over the size cap): that is the cause.
    const { error, cause } = attempt.lostCause();
    this.lostCauseText = cause ?? this.describe(error);
    this.fail(error, this.lostCauseText);
  }

  /** Why the transport closed the current attempt's connection itself, for the requests that close ended (undefined: it just closed). */
  get closeCause(): PiMcpError | undefined {
    return this.current?.closeCause;
  }

  /** A live connection that stopped working: closed, then retried by the policy (a pooled one is just closed). */
  private async breakDown(error: unknown): Promise<void> {
    if (this.pooled) return this.close();
    await this.drop(this.current);
    this.retries.broke();
    this.reconnecting = true;
    this.lostCauseText = this.describe(error);
    this.fail(error, this.lostCauseText);
  }

  /** Complete catalog sizes for `test` (see CatalogUpkeep.counts); `failed` hears why a listing failed. */
  catalogCounts(failed: (problem: string) => void = () => undefined): Promise<CatalogCounts> {
    return this.upkeep.counts(this.requireClient(), failed);
  }

  /** Resolves once the tool-list changes announced so far have been re-listed (see CatalogUpkeep.settled). */
  catalogSettled(): Promise<void> {
    return this.upkeep.settled();
  }

  /**
   * The connected client once the server is no longer connecting (waited for
   * up to its connect timeout and a second), or reconnecting after an
   * unexpected close (waited for the retry that is scheduled and its attempt:
   * see reconnectWaitMs). A lazy server that is idle is started first.
   * `signal` ends the wait.
   */
  async connected(signal?: AbortSignal): Promise<Client> {
    this.wake();
    const waiting = () =>
      this.stateValue === "connecting" || this.stateValue === "idle" || (this.reconnecting && this.stateValue === "retrying");
    const bound = this.reconnecting ? reconnectWaitMs(this.retries.nextRetryAt, this.connectTimeoutMs) : this.connectTimeoutMs + 1_000;
    await this.stateChanges.until(() => !waiting(), bound, signal);
    return this.requireClient();
  }

  /** Every page of an optional list on the connected client (-32601: none). */
  list(method: OptionalListMethod, options: RequestOptions = {}): Promise<CatalogItem[]> {
    return this.listOptional(this.requireClient(), method, options.signal);
  }

  /** One request, sent once more after an expired HTTP session was renewed; a failure names the server and method. */
  request<T>(method: string, work: (client: Client) => Promise<T>, options: RequestOptions = {}): Promise<T> {
    return this.requests.request(method, work, options);
  }

  /** `send`, and once more after an expired HTTP session was renewed (an expired session never ran the request). */
  withSessionRecovery<T>(send: () => Promise<T>): Promise<T> {
    return this.requests.withSessionRecovery(send);
  }

  /** Recovers from an expired HTTP session: a fresh transport and a new initialize. */
  async recoverSession(error: unknown): Promise<boolean> {
    // Authorization lost mid-session (a refresh that failed for good, a step-up): needs_auth, never retried.
    if (authStateOf(error) !== undefined && !this.closed) {
      await this.drop(this.current);
      this.fail(error);
      return false;
    }
    if (!isExpiredSession(error, this.current?.sessionId !== undefined)) return false;
    this.log.append("[pi-mcp] the HTTP session expired; reconnecting\n");
    await this.drop(this.current);
    this.retries.restart();
    this.reconnecting = true;
    await this.attempt();
    return this.stateValue === "connected";
  }

  /** Closes the connection and stops retrying; safe to call more than once. */
  async close(): Promise<void> {
    this.closed = true;
    this.idle.disarm();
    const attempt = this.current;
    this.current = undefined;
    this.upkeep.cancel();
    this.retries.cancel();
    await this.drop(attempt);
    if (this.stateValue !== "disabled") this.setState("disabled");
  }

  /** Closes the attempt's live client and transport on purpose (the connection's catalog of resources goes with them). */
  private async drop(attempt: ConnectAttempt | undefined): Promise<void> {
    this.catalogValue.resources = undefined;
    await attempt?.close("dropped");
  }

  /** What plugins see of the connection through `attempt`'s client, while that attempt is current and its owner still owns it. */
  private live(attempt: ConnectAttempt): LiveConnection {
    const client = attempt.client!;
    const owner = this.owner;
    return {
      ...this.context,
      client,
      requestTimeoutMs: this.requestTimeoutMs,
      isCurrent: () => attempt === this.current && owner !== undefined && owner === this.owner,
      activeCall: () => this.activeCall(),
      resourceList: (method) => this.resourceList(method),
      closeCause: () => this.closeCause,
      request: (method, work, options) => this.request(method, work, options),
    };
  }

  /** Moves the status machine; a listener that fails is logged and never stops it. */
  private setState(state: ConnectionState): void {
    const was = this.stateValue;
    // Connected again, or ended otherwise: no longer reconnecting.
    if (state !== "retrying" && state !== "connecting") {
      this.reconnecting = false;
      this.lostCauseText = undefined;
    }
    this.stateValue = state;
    this.stateChanges.notify();
    if (was === "connected" && state !== "connected")
      inBackground(() => this.kernel.hooks.serverDisconnected.call(this.context, state), this.report("a plugin's disconnect handler"));
    inBackground(() => this.events.stateChanged(this), this.report("reporting the state"));
  }

  /** Logs a failure of background work to the server's retained log (redacted, terminal controls removed). */
  logFailure(what: string, error: unknown): void {
    this.log.append(`[pi-mcp] ${what} failed: ${this.describe(error)}\n`);
  }

  private report(what: string): (error: unknown) => void {
    return (error) => this.logFailure(what, error);
  }

  /** An error in words for the log and causes: redacted, terminal controls removed, bounded. */
  describe(error: unknown): string {
    return safeHead(describeError(error), this.host.redact, 500);
  }
}
