import { Client, type Transport } from "@modelcontextprotocol/client";
import { inBackground, withDeadline } from "../kernel/async.ts";
import { closesConnection, PiMcpError } from "../kernel/errors.ts";
import type { PluginKernel } from "../kernel/hooks.ts";
import { CLIENT_INFO } from "../kernel/protocol.ts";
import type { AuthHandle, ConnectionContext, TransportHandle } from "../kernel/types.ts";
import { sdkOutputOf, withSdkOutput, type SdkOutputSink } from "../safety/sdk-output.ts";
import { safeHead } from "../safety/text.ts";
import { afterProbe, afterProbeNote, HandshakeWatch, priorOf, type AfterProbe, type EraVerdict } from "./era.ts";
import { classifyFailure, noStreamableHttpHint } from "./errors.ts";
import { ConnectTimeoutError, explainConnectFailure, explainLostConnection, LISTING } from "./explain.ts";
import { serverSetting } from "./server-settings.ts";

/**
 * How long the in-place era probe may take on stdio before a silent server is
 * treated as 2025-era. Over HTTP a probe timeout fails the connect instead,
 * so there the probe gets the whole connect timeout.
 */
const STDIO_PROBE_TIMEOUT_MS = 3_000;
/** A connect failure's cause quotes evidence (stderr lines): it may be longer than other causes. */
export const MAX_CAUSE_CHARS = 800;

/** What an attempt reads of, and reports to, the connection that supervises it. */
export interface AttemptSeat {
  kernel(): PluginKernel;
  context(): ConnectionContext;
  /** Whether `attempt` is still the connection's current attempt (anything else is superseded). */
  isCurrent(attempt: ConnectAttempt): boolean;
  /** The connection's sink for the SDK's console output (see ServerConnection.sdkSink). */
  readonly sdkSink: SdkOutputSink;
  /** The authentication for this attempt, from the auth plugins (the connection remembers its credentials). */
  authenticate(): Promise<AuthHandle | undefined>;
  /** What a probe found out about the server's era (kept with the connection), and the verdict this attempt found. */
  era(): EraVerdict | undefined;
  setEra(verdict: EraVerdict | undefined): void;
  /** A change notice of the current attempt's server. */
  noticed(list: "tools" | "resources"): void;
  /** The attempt's client exists (not connected yet): the connection wires the plugins' handlers to it. */
  clientOpened(attempt: ConnectAttempt): void;
  /** The connected client's catalogs (the tools, and the resources in the background). */
  loadCatalogs(attempt: ConnectAttempt, client: Client): Promise<void>;
  /** The attempt's connection closed without being closed on purpose. */
  lost(attempt: ConnectAttempt): void;
  log(text: string): void;
  describe(error: unknown): string;
  report(what: string): (error: unknown) => void;
}

/** What one connection attempt created, so a superseded attempt can clean up after itself. */
interface StartedParts {
  client?: Client;
  transport?: Transport;
  handle?: TransportHandle;
}

/**
 * How an attempt is closed: `superseded` (its connection moved on: everything
 * it created goes, a spent process too), or `dropped` (it is still its
 * connection's, which closes it on purpose: its live client and transport go).
 */
export type AttemptEnd = "superseded" | "dropped";

/**
 * One attempt to connect a server: its transport (and process), its client,
 * the protocol handshake (with the era probe) and the first catalog. It
 * belongs to its connection while it is `connection.current`; from the
 * moment it is not, it is superseded and cleans up after itself.
 */
export class ConnectAttempt {
  /** The live client: undefined once closed on purpose or lost. */
  client: Client | undefined;
  /** The live client's transport: undefined once closed on purpose or lost. */
  transport: Transport | undefined;
  /** The server process's id, once the handshake was answered (until closed or lost). */
  private pid: number | undefined;
  /** Why the transport closed the connection itself (a message over the size cap, a closed stdout), if it did. */
  closeCause: PiMcpError | undefined;
  /** What the attempt is doing, for the cause of a connect timeout. */
  private phase = "starting";
  /** Everything it created, also once it no longer holds it (a superseded close closes all). */
  private readonly parts: StartedParts = {};

  constructor(private readonly seat: AttemptSeat) {}

  private get current(): boolean {
    return this.seat.isCurrent(this);
  }

  /** The server process's id as soon as it was started (also while it is still starting). */
  get processId(): number | undefined {
    return this.pid ?? (this.transport as { pid?: number | null } | undefined)?.pid ?? undefined;
  }

  /** The process id once the handshake was answered (what status shows). */
  get shownPid(): number | undefined {
    return this.pid;
  }

  /** The live transport's HTTP session, if it has one. */
  get sessionId(): string | undefined {
    return (this.transport as { sessionId?: string } | undefined)?.sessionId;
  }

  /** Connects (the SDK's console output goes to the connection's log); rejects when the attempt failed. */
  open(): Promise<void> {
    return withSdkOutput(this.seat.sdkSink, () => this.connectOnce());
  }

  /** Closes it (see AttemptEnd). Closing on purpose is not a lost connection: no retry may start from it. */
  async close(end: AttemptEnd): Promise<void> {
    if (end === "superseded") return closeParts(this.parts.client, this.parts.transport);
    const client = this.client;
    const transport = this.transport;
    this.forget();
    // During the handshake the SDK's client does not own the transport yet (its close leaves it open): closed here too.
    await closeParts(client, transport);
  }

  /** The connection closed by itself: the attempt holds nothing live any more. */
  forget(): void {
    this.client = undefined;
    this.transport = undefined;
    this.pid = undefined;
  }

  /** Why its live connection was lost: the transport's own reason (a message over the size cap), else its evidence in words. */
  lostCause(): { error: PiMcpError; cause?: string } {
    if (this.closeCause) return { error: this.closeCause };
    const redact = this.seat.context().host.redact;
    const cause = safeHead(explainLostConnection(this.parts.handle?.evidence?.(), redact), redact, MAX_CAUSE_CHARS);
    return { error: new PiMcpError("connection_failed", cause), cause };
  }

  /**
   * A failed attempt's cause in plain words, with its evidence (exit, stderr,
   * HTTP status, network error), redacted and bounded. Read it before the
   * transport closes: how the process ended, what it wrote last.
   */
  explainFailure(error: unknown): string {
    const { server, host } = this.seat.context();
    const definition = server.definition;
    const target = definition && definition.transport !== "stdio" ? URL.parse(definition.url)?.host : undefined;
    const text = explainConnectFailure(error, {
      evidence: this.parts.handle?.evidence?.(),
      phase: this.phase,
      connectTimeoutMs: this.connectTimeoutMs,
      redact: host.redact,
      ...(target && { target }),
    });
    const hint = server.transport === "http" ? noStreamableHttpHint(error) : undefined;
    return safeHead(hint ? `${text} (${hint})` : text, host.redact, MAX_CAUSE_CHARS);
  }

  private async connectOnce(): Promise<void> {
    const seat = this.seat;
    this.phase = "preparing its authentication";
    const auth = await seat.authenticate();
    const client = await this.greet(auth);
    this.phase = LISTING;
    this.pid = (this.parts.transport as { pid?: number | null }).pid ?? undefined;
    // SDK callbacks run inside the transport's own event handlers: nothing may throw out of them.
    client.onclose = () => inBackground(() => seat.lost(this), seat.report("handling the closed connection"));
    await seat.loadCatalogs(this, client);
    // Lost while the tools loaded (`lost()` leaves that to the attempt): the attempt fails.
    if (this.client !== client) throw this.closeCause ?? new PiMcpError("connection_failed", "the connection closed while it started");
  }

  /** The server's connect timeout (its own setting, else the global one): for each handshake, and the probe in it. */
  private get connectTimeoutMs(): number {
    return serverSetting(this.seat.context(), "connectTimeoutMs");
  }

  private probeTimeoutMs(): number {
    const connectTimeoutMs = this.connectTimeoutMs;
    return this.seat.context().server.transport === "stdio" ? Math.min(STDIO_PROBE_TIMEOUT_MS, connectTimeoutMs) : connectTimeoutMs;
  }

  /**
   * A client on a transport that has answered the protocol handshake. A
   * stdio server gets one handshake per process (see era.ts): known to be
   * 2025-era, it gets `initialize` alone; otherwise it is probed in place.
   * When that process refused the `initialize` that followed the probe, a
   * fresh process gets `initialize` alone (with a connect timeout of its
   * own); when it ended on the probe, the retry does.
   */
  private async greet(auth: AuthHandle | undefined): Promise<Client> {
    const seat = this.seat;
    const stdio = seat.context().server.transport === "stdio";
    let client = await this.openClient(auth);
    const prior = stdio ? priorOf(seat.era()) : undefined;
    const watch = stdio && !prior ? new HandshakeWatch(this.parts.transport!) : undefined;
    let fresh: AfterProbe | undefined;
    try {
      await this.handshake(client, this.parts.transport!, prior);
    } catch (error) {
      if (!this.current) throw error;
      // A verdict the server refutes (it refused initialize for its protocol version) is forgotten, and a fresh process is probed.
      if (prior && classifyFailure(error) === "unsupported_protocol") fresh = "probe";
      else if (watch) fresh = afterProbe(watch, error, this.probeTimeoutMs());
      if (!fresh) throw error;
      // The process ended on the probe or refused the initialize after it: a 2025-era server, whatever retry comes next.
      seat.setEra(fresh === "probe" ? undefined : { kind: "legacy", at: Date.now() });
      seat.log(afterProbeNote(fresh, seat.describe(error)));
      if (fresh === "next-initialize") throw error;
    } finally {
      watch?.release();
    }
    if (fresh) {
      // The spent process is closed beside the fresh one's start (its close may wait for it to exit).
      const spent = { ...this.parts };
      if (spent.client) spent.client.onerror = () => undefined; // what its close reports is not this connection's cause
      inBackground(() => closeParts(spent.client, spent.transport), seat.report("closing the process that could not take the handshake"));
      // A server that refused initialize for its protocol version is a 2026-07-28 one: its probe may take the whole connect timeout.
      client = await this.openClient(auth, fresh === "probe" ? this.connectTimeoutMs : undefined);
      await this.handshake(client, this.parts.transport!, fresh === "initialize" ? { kind: "legacy" } : undefined);
    }
    if (stdio && !(prior && client.getProtocolEra() === "legacy"))
      seat.setEra(client.getProtocolEra() === "legacy" ? { kind: "legacy", at: Date.now() } : undefined);
    return client;
  }

  /** The protocol handshake (with `prior`, the era verdict that skips the probe), within the connect timeout. */
  private async handshake(client: Client, transport: Transport, prior?: { kind: "legacy" }): Promise<void> {
    this.phase =
      this.seat.context().server.transport === "stdio"
        ? "waiting for the server process to answer the protocol handshake"
        : "waiting for the server to answer the protocol handshake";
    const timeoutMs = this.connectTimeoutMs;
    await withDeadline(
      client.connect(transport, { timeout: timeoutMs, ...(prior && { prior }) }),
      timeoutMs,
      () => new ConnectTimeoutError(timeoutMs),
    );
  }

  /**
   * A transport (from the transport plugins) and a client on it, wired to
   * the connection (notices, errors, the plugins' handlers), not connected
   * yet. The attempt's parts and its live ones are these from now on.
   */
  private async openClient(auth: AuthHandle | undefined, probeTimeoutMs = this.probeTimeoutMs()): Promise<Client> {
    const seat = this.seat;
    const hooks = seat.kernel().hooks;
    this.phase = "setting up its transport";
    const handle = await hooks.createTransport.promise({ ...seat.context(), auth });
    if (!handle) throw new PiMcpError("invalid_settings", `no transport plugin handles "${seat.context().server.transport}"`);
    sdkOutputOf(handle.transport, seat.sdkSink);
    this.parts.handle = handle;
    this.parts.transport = handle.transport;
    // Closed while the hooks ran: start nothing (a close cannot see a client that does not exist yet).
    if (!this.current) throw new PiMcpError("connection_failed", "the connection was closed while it started");
    const capabilities = hooks.clientCapabilities.call({}, seat.context());
    const toolsNotice = () => {
      if (this.current) seat.noticed("tools");
    };
    const resourcesNotice = () => {
      if (this.current) seat.noticed("resources");
    };
    const client = new Client(CLIENT_INFO, {
      capabilities,
      versionNegotiation: { mode: "auto", probe: { timeoutMs: probeTimeoutMs } },
      inputRequired: { autoFulfill: true, maxRounds: 10 },
      // On 2026-07-28 peers change notices arrive only through a subscription, which this option opens.
      // We re-list ourselves (paged, bounded), so the SDK's own refresh stays off.
      listChanged: {
        tools: { autoRefresh: false, debounceMs: 0, onChanged: toolsNotice },
        resources: { autoRefresh: false, debounceMs: 0, onChanged: resourcesNotice },
      },
    });
    this.client = client;
    this.transport = handle.transport;
    this.parts.client = client;
    client.onerror = (error) =>
      inBackground(
        () => {
          if (closesConnection(error) && this.current) this.closeCause ??= error; // the first reason is the reason
          seat.log(`[pi-mcp] ${seat.describe(error)}\n`);
        },
        () => undefined,
      );
    client.setNotificationHandler("notifications/tools/list_changed", toolsNotice);
    client.setNotificationHandler("notifications/resources/list_changed", resourcesNotice);
    seat.clientOpened(this);
    return client;
  }
}

/**
 * Closes a client and its transport. A close that raced the SDK's connect can
 * run before the transport spawned its process, so the transport is closed
 * again once the attempt has settled.
 */
async function closeParts(client: Client | undefined, transport: Transport | undefined): Promise<void> {
  if (client) client.onclose = undefined;
  await client?.close().catch(() => undefined);
  await transport?.close().catch(() => undefined);
}
