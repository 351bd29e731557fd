import { Client, type Tool, type Transport } from "@modelcontextprotocol/client";
import type { Exposure, Lifecycle, ServerEntry } from "../kernel/settings.ts";
import type { ConnectionState, ConnectionStatus } from "../kernel/status.ts";
import type { LiveServer, RequestOptions } from "../kernel/host.ts";
import { exposureOf } from "./exposure.ts";
import { effectiveRoots, rootsConfigured, shownRootFolder } from "../config/roots.ts";
import { closesConnection, describeError, PiMcpError } from "../kernel/errors.ts";
import type { PluginKernel } from "../kernel/hooks.ts";
import type { ConnectionContext, HostContext, LiveConnection, TransportEvidence, TransportHandle } from "../kernel/types.ts";
import { ConnectTimeoutError, explainConnectFailure, explainLostConnection, LISTING } from "./explain.ts";
import type { CallScope } from "../kernel/services.ts";
import { sdkOutputOf, withSdkOutput, type SdkOutputSink } from "../safety/sdk-output.ts";
import { createRedactor, safeHead, safeText } from "../safety/text.ts";
import { Changes, inBackground, withDeadline } from "../kernel/async.ts";
import { coalesce } from "./coalesce.ts";
import { authStateOf, classifyFailure, isConnectionLost, isExpiredSession, noStreamableHttpHint, requestFailure } from "./errors.ts";
import { CLIENT_INFO, type CatalogItem, type OptionalListMethod, type ResourceListMethod } from "../kernel/protocol.ts";
import { listOptional, listTools, ResourceCatalog, ServerCatalog, type CatalogTool } from "./catalog.ts";
import { RetainedLog } from "./retained-log.ts";
import { retryDelayMs } from "./retry.ts";

/**
 * How long the in-place era probe may take on stdio before a silent server is
 * treated as 2025-era. Over HTTP a probe timeout fails the connect instead,
 * so there the probe gets the whole connect timeout.
 */
const STDIO_PROBE_TIMEOUT_MS = 3_000;
/** A connect failure's cause quotes evidence (stderr lines): it may be longer than other causes. */
const MAX_CAUSE_CHARS = 800;
/** A connection that broke sooner than this after connecting counts as a failed attempt of its own run of retries. */
export const STABLE_CONNECTION_MS = 30_000;
/** Catalog notifications are folded for this long before anything is re-listed. */
export const CATALOG_COALESCE_MS = 50;

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
  private client: Client | undefined;
  private transport: Transport | undefined;
  private pid: number | undefined;
  private stateValue: ConnectionState;
  private attempts = 0;
  private nextRetryAt: number | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private causeText: string | undefined;
  private connectedAt: number | undefined;
  /** How many attempts the current connection took (see `attemptsSoFar`). */
  private attemptsToConnect = 0;
  /** Why the transport closed the connection itself (a message over the size cap, a closed stdout), if it did. */
  private closeCauseValue: PiMcpError | undefined;
  private closing = false;
  /** The authentication identity (settings and stored credentials) the current client was built with. */
  private builtWith: string | undefined;
  /** The credential values the current client's authentication holds. */
  private authSecrets: () => readonly string[] = () => [];
  /**
   * Where the SDK's own console output about this server goes: its retained
   * log, redacted at once with the settings' secrets and the credentials the
   * authentication holds (a token endpoint's error may quote them).
   */
  private readonly sdkSink: SdkOutputSink = (line) => this.logValue.append(`${createRedactor(this.authSecrets(), this.host.redact)(line)}\n`);
  private generation = 0;
  /** The current attempt's transport, whose evidence explains a failure. */
  private handle: TransportHandle | undefined;
  /** What the current attempt is doing, for the cause of a connect timeout. */
  private phase = "starting";
  /** The server's catalog (validated tools, resource lists), kept with the connection (and across handoff). */
  private readonly catalogValue = new ServerCatalog();
  /** Optional lists the current client's server answered with -32601 (logged once each). */
  private notImplemented = new Set<string>();
  /** Tool calls in flight, newest last: server requests are answered in their scope. */
  private readonly calls: CallScope[] = [];
  private readonly refreshTools = coalesce(CATALOG_COALESCE_MS, () => this.reloadTools(), this.report("re-listing the tools"));
  private readonly refreshResources = coalesce(CATALOG_COALESCE_MS, () => this.catalogValue.resources?.refresh(), this.report("re-listing the resources"));
  /** Which session's host owns the connection; handlers of an earlier owner see `isCurrent()` false. */
  private epoch = 0;
  /** Set while the connection waits in the pool between two sessions. */
  private released = false;
  /** When a later session took this connection over from an earlier one. */
  private reusedAt: number | undefined;
  private contextValue: ConnectionContext;
  private entryValue: ServerEntry;
  /** Woken at every state change (what `connected()` waits on). */
  private readonly stateChanges = new Changes();
  /** A lazy server's countdown to closing, while nothing uses it. */
  private idleTimer: NodeJS.Timeout | undefined;
  /** Requests (prompts, resources, completion) in flight: a lazy server is not idle meanwhile. */
  private requestsInFlight = 0;

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
    if (this.stateValue === "connected" && this.client && !this.released) this.kernel.hooks.connectionUpdated.call(this.live(this.generation));
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
    this.released = true;
    this.disarmIdleTimer();
    this.epoch++;
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
    this.released = false;
    this.epoch++;
    this.reusedAt = Date.now();
    const live = this.live(this.generation);
    kernel.hooks.clientCreated.call(live);
    events.stateChanged(this);
    events.toolsChanged(this);
    this.armIdleTimer();
    await kernel.hooks.serverConnected.promise(live);
  }

  /**
   * Whether the stored credentials are still the ones this client was built
   * with (re-read now): after a logout or a new `auth`, even in another
   * terminal, a retained client must not carry the old ones to a new session.
   */
  stillAuthorizedAsBuilt(): boolean {
    return this.builtWith === authIdentityOf(this.kernel, this.context);
  }

  /** The server process's id as soon as it was started (also while it is still starting), for a kill that must not miss it. */
  get processId(): number | undefined {
    return this.pid ?? ((this.transport as { pid?: number | null } | undefined)?.pid ?? undefined);
  }

  /** Whether the pool may keep this connection for the next session. */
  get reusable(): boolean {
    return this.stateValue === "connected" && this.client !== undefined && !this.closing;
  }

  get name(): string {
    return this.entry.name;
  }

  get state(): ConnectionState {
    return this.stateValue;
  }

  /** What the connection knows of its server's catalog: the validated tools and the resource lists. */
  get catalog(): ServerCatalog {
    return this.catalogValue;
  }

  /** The server's request timeout (its own setting, else the global one), never past the request deadline. */
  get requestTimeoutMs(): number {
    return Math.min(this.entry.definition?.requestTimeoutMs ?? this.host.config.requestTimeoutMs, this.requestDeadlineMs);
  }

  /** The most one request may take in all, progress or not (its own setting, else the global one). */
  get requestDeadlineMs(): number {
    return this.entry.definition?.requestDeadlineMs ?? this.host.config.requestDeadlineMs;
  }

  private get connectTimeoutMs(): number {
    return this.entry.definition?.connectTimeoutMs ?? this.host.config.connectTimeoutMs;
  }

  /** When the server runs: `eager` (from the session's start) or `lazy` (when something needs it; closed when idle). */
  get lifecycle(): Lifecycle {
    return this.entry.definition?.lifecycle ?? this.host.config.lifecycle;
  }

  private get idleTimeoutMs(): number {
    return this.entry.definition?.idleTimeoutMs ?? this.host.config.idleTimeoutMs;
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

  /** A lazy server unused for its idle time closes; use (a call, a request) counts again from its end. */
  private armIdleTimer(): void {
    this.disarmIdleTimer();
    if (this.lifecycle !== "lazy" || this.stateValue !== "connected" || this.released || this.calls.length > 0 || this.requestsInFlight > 0) return;
    const timer = setTimeout(() => inBackground(() => this.closeIdle(timer), this.report("closing the idle server")), this.idleTimeoutMs);
    timer.unref?.(); // an idle countdown never keeps Pi alive
    this.idleTimer = timer;
  }

  private disarmIdleTimer(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }

  /** The idle time ran out: the process or connection goes; the catalog stays, and the next use starts the server again. */
  private async closeIdle(timer: NodeJS.Timeout): Promise<void> {
    if (this.idleTimer !== timer || this.stateValue !== "connected" || this.calls.length > 0 || this.requestsInFlight > 0) return;
    this.idleTimer = undefined;
    this.generation++;
    this.refreshTools.cancel();
    this.log.append(`[pi-mcp] closed after ${this.idleTimeoutMs} ms without use (lazy); the next use starts it again\n`);
    await this.discardClient();
    this.setState("idle");
  }

  status(): ConnectionStatus {
    const version = this.client?.getServerVersion();
    return {
      name: this.name,
      state: this.stateValue,
      attempts: this.attempts,
      ...(this.nextRetryAt !== undefined && { nextRetryAt: this.nextRetryAt }),
      ...(this.causeText !== undefined && { cause: this.causeText }),
      ...(this.stateValue === "connected" && this.client?.getNegotiatedProtocolVersion() && { protocolVersion: this.client.getNegotiatedProtocolVersion()! }),
      ...(version && { serverInfo: { name: safeText(version.name, this.host.redact), version: safeText(version.version, this.host.redact) } }),
      tools: this.catalogValue.tools.length,
      exposures: this.exposureCounts(),
      ...(this.connectedAt !== undefined && { connectedAt: this.connectedAt }),
      ...(this.pid !== undefined && { pid: this.pid }),
      ...(this.reusedAt !== undefined && { reusedAt: this.reusedAt }),
      ...(this.lifecycle === "lazy" && { lazy: { idleTimeoutMs: this.idleTimeoutMs } }),
      ...this.configuredRoots(),
    };
  }

  private configuredRoots(): { roots?: false | string[] } {
    const { config, cwd, redact } = this.hostValue;
    if (!rootsConfigured(config, this.entryValue.definition)) return {};
    const roots = effectiveRoots(config, this.entryValue.definition, cwd);
    return { roots: roots === false ? false : roots.map((folder) => safeText(shownRootFolder(folder), redact)) };
  }

  /** How many of the server's tools have each exposure. */
  private exposureCounts(): Partial<Record<Exposure, number>> {
    const counts: Partial<Record<Exposure, number>> = {};
    for (const { tool } of this.catalogValue.tools) {
      const exposure = exposureOf(this.hostValue.config, this.entry.definition, tool.name);
      counts[exposure] = (counts[exposure] ?? 0) + 1;
    }
    return counts;
  }

  /** The connected client, or an error that says why there is none. */
  requireClient(): Client {
    if (this.stateValue === "connected" && this.client) return this.client;
    throw new PiMcpError("connection_failed", `MCP server "${this.name}" is not connected (${this.stateValue}${this.causeText ? `: ${this.causeText}` : ""})`);
  }

  /** The server's instructions while its tools are offered: from the live client, or (idle) as its catalog keeps them. */
  instructions(): string | undefined {
    if (this.stateValue === "connected") return this.client?.getInstructions();
    return this.stateValue === "idle" ? this.catalogValue.instructions : undefined;
  }

  /** Marks a tool call in flight; returns the function that ends it. */
  enterCall(scope: CallScope): () => void {
    this.calls.push(scope);
    this.disarmIdleTimer();
    return () => {
      const index = this.calls.lastIndexOf(scope);
      if (index !== -1) this.calls.splice(index, 1);
      this.armIdleTimer();
    };
  }

  /** The newest tool call still in flight (an aborted one no longer counts). */
  activeCall(): CallScope | undefined {
    return this.calls.findLast((scope) => !scope.signal?.aborted);
  }

  /** Starts connecting; resolves when this attempt (not its retries) has settled. */
  async start(): Promise<void> {
    if (!this.entry.enabled || !this.entry.definition) return;
    this.closing = false;
    this.attempts = 0;
    await this.attempt();
  }

  private async attempt(): Promise<void> {
    if (this.closing) return;
    const generation = ++this.generation;
    this.attempts++;
    this.nextRetryAt = undefined;
    // /mcp logs shows where each attempt begins.
    // On a line of its own, even after a server line that did not end (a process that stopped mid-line).
    this.log.append(`${this.log.endsLine ? "" : "\n"}[pi-mcp] ── connection attempt ${this.attempts} at ${new Date().toISOString()} ──\n`);
    this.closeCauseValue = undefined;
    this.setState("connecting");
    const started: StartedParts = {};
    try {
      await withSdkOutput(this.sdkSink, () => this.connectOnce(generation, started));
      if (generation !== this.generation) return await closeParts(started);
      this.attemptsToConnect = this.attempts;
      this.attempts = 0;
      this.causeText = undefined;
      this.connectedAt = Date.now();
      this.catalogValue.instructions = this.client?.getInstructions();
      this.setState("connected");
      this.armIdleTimer();
      await this.kernel.hooks.serverConnected.promise(this.live(generation));
    } catch (error) {
      if (generation !== this.generation || this.closing) return await closeParts(started);
      // Read before the transport closes: how the process ended, what it wrote last.
      const cause = this.explainFailure(error, started.handle?.evidence?.());
      await this.discardClient();
      // A plugin that failed once connected: the attempts count as for a connection that broke.
      if (this.stateValue === "connected") this.attempts = this.attemptsSoFar();
      // Lost while it started because the transport closed it (a message over the size cap): that is the cause.
      if (isConnectionLost(error) && this.closeCauseValue) this.fail(this.closeCauseValue);
      else this.fail(error, cause);
    }
  }

  /** A failed attempt's cause in plain words, with its evidence (exit, stderr, HTTP status, network error), redacted and bounded. */
  private explainFailure(error: unknown, evidence: TransportEvidence | undefined): string {
    const definition = this.entry.definition;
    const target = definition && definition.transport !== "stdio" ? URL.parse(definition.url)?.host : undefined;
    const text = explainConnectFailure(error, { evidence, phase: this.phase, connectTimeoutMs: this.connectTimeoutMs, redact: this.host.redact, ...(target && { target }) });
    const hint = this.entry.transport === "http" ? noStreamableHttpHint(error) : undefined;
    return safeHead(hint ? `${text} (${hint})` : text, this.host.redact, MAX_CAUSE_CHARS);
  }

  private fail(error: unknown, cause = this.describe(error)): void {
    this.causeText = cause;
    const kind = error instanceof PiMcpError && error.code === "invalid_settings" ? "terminal" : classifyFailure(error);
    if (kind === "auth") return this.setState("needs_auth");
    if (kind === "client_registration") return this.setState("needs_client_registration");
    if (kind !== "retryable" || this.attempts > this.host.config.retry.maxRetries) return this.setState("failed");
    const delay = retryDelayMs(this.host.config.retry, this.attempts);
    this.nextRetryAt = Date.now() + delay;
    this.setState("retrying");
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => inBackground(() => this.attempt(), this.report("reconnecting")), delay);
    this.retryTimer.unref?.();
  }

  private async connectOnce(generation: number, started: StartedParts): Promise<void> {
    const hooks = this.kernel.hooks;
    // What the credentials are when this client gets them: a handoff checks they still are (see stillAuthorizedAsBuilt).
    this.builtWith = authIdentityOf(this.kernel, this.context);
    this.phase = "preparing its authentication";
    const auth = await hooks.auth.promise(this.context);
    this.authSecrets = auth?.secrets ?? (() => []);
    this.phase = "setting up its transport";
    const handle = await hooks.createTransport.promise({ ...this.context, auth });
    if (!handle) throw new PiMcpError("invalid_settings", `no transport plugin handles "${this.entry.transport}"`);
    sdkOutputOf(handle.transport, this.sdkSink);
    started.handle = handle;
    this.handle = handle;
    // Closed while the hooks ran: start nothing (close() cannot see a client that does not exist yet).
    if (generation !== this.generation) throw new PiMcpError("connection_failed", "the connection was closed while it started");
    this.reusedAt = undefined; // a connection of its own from now on
    const capabilities = hooks.clientCapabilities.call({}, this.context);
    const toolsChanged = () => {
      if (generation === this.generation) this.refreshTools.trigger();
    };
    const resourcesChanged = () => {
      if (generation === this.generation) this.refreshResources.trigger();
    };
    const client = new Client(CLIENT_INFO, {
      capabilities,
      versionNegotiation: { mode: "auto", probe: { timeoutMs: this.probeTimeoutMs() } },
      inputRequired: { autoFulfill: true, maxRounds: 10 },
      // On 2026-07-28 peers change notices arrive only through a subscription, which this option opens.
      // We re-list ourselves (paged, bounded), so the SDK's own refresh stays off.
      listChanged: {
        tools: { autoRefresh: false, debounceMs: 0, onChanged: toolsChanged },
        resources: { autoRefresh: false, debounceMs: 0, onChanged: resourcesChanged },
      },
    });
    this.client = client;
    this.transport = handle.transport;
    started.client = client;
    started.transport = handle.transport;
    client.onerror = (error) =>
      inBackground(() => {
        if (closesConnection(error) && generation === this.generation) this.closeCauseValue ??= error; // the first reason is the reason
        this.log.append(`[pi-mcp] ${this.describe(error)}\n`);
      }, () => undefined);
    client.setNotificationHandler("notifications/tools/list_changed", toolsChanged);
    client.setNotificationHandler("notifications/resources/list_changed", resourcesChanged);
    this.catalogValue.resources = undefined;
    this.notImplemented = new Set();
    hooks.clientCreated.call(this.live(generation));
    this.phase = this.entry.transport === "stdio" ? "waiting for the server process to answer the protocol handshake" : "waiting for the server to answer the protocol handshake";
    await withDeadline(client.connect(handle.transport, { timeout: this.connectTimeoutMs }), this.connectTimeoutMs, () => new ConnectTimeoutError(this.connectTimeoutMs));
    this.phase = LISTING;
    this.pid = (handle.transport as { pid?: number | null }).pid ?? undefined;
    // SDK callbacks run inside the transport's own event handlers: nothing may throw out of them.
    client.onclose = () => inBackground(() => this.lost(generation), this.report("handling the closed connection"));
    if (client.getServerCapabilities()?.resources) {
      // Listed now, beside the tools, but not waited for: resources are optional, so a slow or failing
      // listing never holds the connection up; its readers (and `test`) wait for it, and it stays cached.
      const catalog = new ResourceCatalog((method) => this.listOptional(client, method));
      this.catalogValue.resources = catalog;
      inBackground(() => catalog.load(), this.report("listing the resources"));
    }
    await this.loadTools(generation).catch((error: unknown) => Promise.reject(this.namedListFailure(error)));
    // Lost while the tools loaded (`lost()` leaves that to the attempt): the attempt fails.
    if (this.client !== client) throw this.closeCauseValue ?? new PiMcpError("connection_failed", "the connection closed while it started");
  }

  /** A failed tools/list names its method (an authorization failure stays as it is: it is classified by its type). */
  private namedListFailure(error: unknown): unknown {
    if (error instanceof PiMcpError || authStateOf(error) !== undefined || classifyFailure(error) !== "retryable") return error;
    return requestFailure(`${this.name} tools/list`, error, { timeoutMs: this.requestTimeoutMs, redact: this.host.redact, closeCause: this.closeCauseValue });
  }

  /**
   * Every page of an optional list (resources, templates, prompts). A server
   * that does not implement it (-32601) has none: logged once per connection.
   */
  listOptional(client: Client, method: OptionalListMethod, signal?: AbortSignal): Promise<CatalogItem[]> {
    return listOptional(client, method, {
      server: this.name,
      timeoutMs: this.requestTimeoutMs,
      redact: this.host.redact,
      ...(signal && { signal }),
      notImplemented: (missing) => {
        if (this.notImplemented.has(missing)) return;
        this.notImplemented.add(missing);
        this.log.append(`[pi-mcp] the server does not implement ${missing} (-32601 Method not found): it has none\n`);
      },
    });
  }

  /** A cached resource list: empty when the server offers no resources; fetched again when the last attempt failed. */
  resourceList(method: ResourceListMethod): Promise<readonly CatalogItem[]> {
    return this.catalogValue.resources?.get(method) ?? Promise.resolve([]);
  }

  /** An unexpected close (a crash, a dropped connection) reconnects by the retry policy. */
  private lost(generation: number): void {
    if (generation !== this.generation || this.closing) return;
    if (this.released) {
      inBackground(() => this.close(), this.report("closing")); // nobody owns it: the pool drops it, nothing retries
      return;
    }
    this.client = undefined;
    this.catalogValue.resources = undefined;
    this.transport = undefined;
    this.pid = undefined;
    if (this.stateValue === "connecting") return; // the attempt is still loading the catalogs: it fails itself
    this.attempts = this.attemptsSoFar();
    // The transport closed it for a reason of its own (a message over the size cap): that is the cause.
    if (this.closeCauseValue) return this.fail(this.closeCauseValue);
    const cause = safeHead(explainLostConnection(this.handle?.evidence?.(), this.host.redact), this.host.redact, MAX_CAUSE_CHARS);
    this.fail(new PiMcpError("connection_failed", cause), cause);
  }

  /** Why the transport closed the connection itself, for the requests that close ended (undefined: it just closed). */
  get closeCause(): PiMcpError | undefined {
    return this.closeCauseValue;
  }

  private probeTimeoutMs(): number {
    return this.entry.transport === "stdio" ? Math.min(STDIO_PROBE_TIMEOUT_MS, this.connectTimeoutMs) : this.connectTimeoutMs;
  }

  /**
   * The re-list a change notice asks for. It is the connect's own catalog
   * request, so a failure on a live connection is handled like a failed
   * connect: the connection is closed and retried by the policy (`retrying`).
   * A connection that closed meanwhile is already handled by `lost()`.
   */
  private async reloadTools(): Promise<void> {
    const generation = this.generation;
    try {
      await this.loadTools(generation);
    } catch (error) {
      const current = generation === this.generation && !this.closing;
      this.log.append(`[pi-mcp] re-listing the tools after a change notice failed: ${this.describe(error)}\n`);
      if (!current || this.stateValue !== "connected") return;
      await this.breakDown(new PiMcpError("connection_failed", `tools/list failed after a change notice: ${this.describe(error)}`, { cause: error }));
    }
  }

  /** A live connection that stopped working: closed, then retried by the policy (a released one is just closed). */
  private async breakDown(error: unknown): Promise<void> {
    if (this.released) return this.close();
    await this.discardClient();
    this.attempts = this.attemptsSoFar();
    this.fail(error);
  }

  /**
   * The attempts a live connection that broke counts as made: one, after it
   * was stable; else the attempts it took to connect, so a server that fails
   * right after every connect runs out of retries (`failed`) instead of being
   * restarted forever.
   */
  private attemptsSoFar(): number {
    const stable = this.connectedAt !== undefined && Date.now() - this.connectedAt >= STABLE_CONNECTION_MS;
    return stable ? 1 : Math.max(1, this.attemptsToConnect);
  }

  private async loadTools(generation: number): Promise<void> {
    const client = this.client;
    if (!client || !client.getServerCapabilities()?.tools) return;
    const tools = await listTools(client, { server: this.name, timeoutMs: this.requestTimeoutMs, log: (text) => this.log.append(text), filter: this.entry.definition?.tools });
    if (generation !== this.generation) return;
    this.catalogValue.tools = tools;
    this.events.toolsChanged(this);
  }

  /**
   * Complete catalog sizes for `test`: every page of each list the server
   * supports (resources and templates from the connection's catalog). A list
   * the server does not implement counts zero; so does one that fails, as in
   * Pi (the server and its tools stay usable, only that listing fails), and
   * `failed` hears why, in words that name the method.
   */
  async catalogCounts(failed: (problem: string) => void = () => undefined): Promise<{ tools: number; resources: number; resourceTemplates: number; prompts: number }> {
    const client = this.requireClient();
    const counted = (list: Promise<readonly CatalogItem[]>) =>
      list.catch((error: unknown) => {
        failed(safeText(describeError(error), this.host.redact));
        return [];
      });
    const [resources, resourceTemplates, prompts] = await Promise.all([
      counted(this.resourceList("resources/list")),
      counted(this.resourceList("resources/templates/list")),
      counted(client.getServerCapabilities()?.prompts ? this.listOptional(client, "prompts/list") : Promise.resolve([])),
    ]);
    return { tools: this.catalogValue.tools.length, resources: resources.length, resourceTemplates: resourceTemplates.length, prompts: prompts.length };
  }

  /** Resolves once no announced catalog change is still folded or being re-listed. */
  catalogSettled(): Promise<void> {
    return this.refreshTools.idle();
  }

  /**
   * The connected client once the server is no longer connecting (waited for
   * up to its connect timeout and a second). A lazy server that is idle is
   * started first.
   */
  async connected(): Promise<Client> {
    this.wake();
    await this.stateChanges.until(() => this.stateValue !== "connecting" && this.stateValue !== "idle", this.connectTimeoutMs + 1_000);
    return this.requireClient();
  }

  /** Every page of an optional list on the connected client (-32601: none). */
  list(method: OptionalListMethod, options: RequestOptions = {}): Promise<CatalogItem[]> {
    return this.listOptional(this.requireClient(), method, options.signal);
  }

  /** One request, sent once more after an expired HTTP session was renewed; a failure names the server and method. */
  async request<T>(method: string, work: (client: Client) => Promise<T>, options: RequestOptions = {}): Promise<T> {
    this.requestsInFlight++;
    this.disarmIdleTimer();
    try {
      if (this.stateValue === "idle") await this.connected();
      return await this.withSessionRecovery(() => work(this.requireClient()));
    } catch (error) {
      // Already named (not connected, a paging problem), unless it ended because the caller gave up.
      if (error instanceof PiMcpError && !options.signal?.aborted) throw error;
      throw requestFailure(`${this.name} ${method}`, error, { timeoutMs: this.requestTimeoutMs, redact: this.host.redact, closeCause: this.closeCauseValue, ...(options.signal && { signal: options.signal }) });
    } finally {
      this.requestsInFlight--;
      this.armIdleTimer();
    }
  }

  /** `send`, and once more after an expired HTTP session was renewed (an expired session never ran the request). */
  async withSessionRecovery<T>(send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (error) {
      if (!(error instanceof PiMcpError) && (await this.recoverSession(error))) return await send();
      throw error;
    }
  }

  /** Recovers from an expired HTTP session: a fresh transport and a new initialize. */
  async recoverSession(error: unknown): Promise<boolean> {
    // Authorization lost mid-session (a refresh that failed for good, a step-up): needs_auth, never retried.
    if (authStateOf(error) !== undefined && !this.closing) {
      await this.discardClient();
      this.fail(error);
      return false;
    }
    const sessionId = (this.transport as { sessionId?: string } | undefined)?.sessionId;
    if (!isExpiredSession(error, sessionId !== undefined)) return false;
    this.log.append("[pi-mcp] the HTTP session expired; reconnecting\n");
    await this.discardClient();
    this.attempts = 0;
    await this.attempt();
    return this.stateValue === "connected";
  }

  /** Closes the connection and stops retrying; safe to call more than once. */
  async close(): Promise<void> {
    this.closing = true;
    this.disarmIdleTimer();
    this.generation++;
    this.refreshTools.cancel();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.nextRetryAt = undefined;
    await this.discardClient();
    if (this.stateValue !== "disabled") this.setState("disabled");
  }

  private async discardClient(): Promise<void> {
    const client = this.client;
    const transport = this.transport;
    this.client = undefined;
    this.catalogValue.resources = undefined;
    this.transport = undefined;
    this.pid = undefined;
    // Closing on purpose is not a lost connection: no retry may start from it (closeParts unhooks onclose).
    // During the handshake the SDK's client does not own the transport yet (its close leaves it open): closed here too.
    await closeParts({ ...(client && { client }), ...(transport && { transport }) });
  }

  private live(generation: number): LiveConnection {
    const client = this.client!;
    const epoch = this.epoch;
    return {
      ...this.context,
      client,
      requestTimeoutMs: this.requestTimeoutMs,
      isCurrent: () => generation === this.generation && epoch === this.epoch && !this.closing && !this.released,
      activeCall: () => this.activeCall(),
      resourceList: (method) => this.resourceList(method),
      closeCause: () => this.closeCauseValue,
      request: (method, work, options) => this.request(method, work, options),
    };
  }

  /** Moves the status machine; a listener that fails is logged and never stops it. */
  private setState(state: ConnectionState): void {
    const was = this.stateValue;
    this.stateValue = state;
    this.stateChanges.notify();
    if (was === "connected" && state !== "connected") inBackground(() => this.kernel.hooks.serverDisconnected.call(this.context, state), this.report("a plugin's disconnect handler"));
    inBackground(() => this.events.stateChanged(this), this.report("reporting the state"));
  }

  /** Logs a failure of background work to the server's retained log (redacted, terminal controls removed). */
  logFailure(what: string, error: unknown): void {
    this.log.append(`[pi-mcp] ${what} failed: ${this.describe(error)}\n`);
  }

  private report(what: string): (error: unknown) => void {
    return (error) => this.logFailure(what, error);
  }

  private describe(error: unknown): string {
    return safeHead(describeError(error), this.host.redact, 500);
  }
}

/** What one connection attempt created, so a superseded attempt can clean up after itself. */
interface StartedParts {
  client?: Client;
  transport?: Transport;
  handle?: TransportHandle;
}

/**
 * Closes a superseded attempt's client and transport. A close() that raced
 * the SDK's connect can run before the transport spawned its process, so the
 * transport is closed again once the attempt has settled.
 */
async function closeParts(started: StartedParts): Promise<void> {
  if (started.client) started.client.onclose = undefined;
  await started.client?.close().catch(() => undefined);
  await started.transport?.close().catch(() => undefined);
}

/**
 * The authentication a connection of `context` would use: its auth settings,
 * refined by the auth plugins (the stored OAuth credentials, read now). It
 * holds the settings' resolved values: keep it in memory, hash it for keys.
 */
export function authIdentityOf(kernel: PluginKernel, context: ConnectionContext): string {
  const definition = context.server.definition;
  const settings = definition === undefined || definition.transport === "stdio" ? null : (definition.auth ?? null);
  return kernel.hooks.authIdentity.call(JSON.stringify(settings), context);
}
