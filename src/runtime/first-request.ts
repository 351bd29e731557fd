/**
 * The first model request of a run without a terminal UI (print, JSON and
 * RPC modes): its agent start waits, for at most `firstRequestWaitMs` (never
 * beyond a server's connectTimeoutMs), until every eager server whose catalog
 * is not offered yet has connected or its first attempt has ended, so that
 * request carries their tools. Not waited for: lazy servers, servers whose
 * catalog is known (recorded or handed over), servers that need an
 * authorization first (OAuth without stored credentials, or a connection that
 * reached `needs_auth` / `needs_client_registration`). A server still
 * connecting when its time is up is left to connect in the background, as
 * without the wait; its log says so.
 *
 * Waiting is for events (each change of a connection's state), bounded by
 * the deadlines; the Instruction Snapshot is captured afterwards, from what
 * had reached Pi by then, so the first request's tools and instructions
 * come from the same servers.
 */
import type { Changes } from "../kernel/async.ts";
import { firstRequestWaitOf, type EffectiveConfig, type ServerEntry } from "../kernel/settings.ts";
import type { ConnectionState } from "../kernel/status.ts";

/** What the wait reads of a session's host. */
export interface FirstRequestHost {
  readonly config: EffectiveConfig;
  /** Whether the server's tools are offered to Pi now (live, kept, or known from a recorded catalog). */
  offersCatalog(name: string): boolean;
  server(name: string): { readonly state: ConnectionState; readonly log: { append(text: string): void } } | undefined;
  /** Waits, at most `timeoutMs`, until the catalog changes already announced have reached Pi. */
  flushTools(timeoutMs: number): Promise<boolean>;
}

export interface FirstRequestWait {
  /** When the agent start began (`Date.now()`): every server's time counts from there. */
  readonly since: number;
  /** Woken at every change of a connection's state. */
  readonly changes: Changes;
  /** The session ended: nothing is waited for any more. */
  readonly ended: () => boolean;
  /** Whether a server needs an authorization before it can connect (OAuth without stored credentials). */
  readonly needsAuthorization?: (entry: ServerEntry) => Promise<boolean>;
}

/** The longest the first request of a session with `config` may wait for any server (0: it does not wait). */
export function longestFirstRequestWait(config: EffectiveConfig | undefined): number {
  if (!config?.valid) return 0;
  return Math.max(0, ...config.servers.map((entry) => firstRequestWaitOf(config, entry)));
}

/** A state in which a server's first attempt has ended (it connected, failed, retries later, or waits for authorization). */
function attemptEnded(state: ConnectionState | undefined): boolean {
  return state !== undefined && state !== "connecting";
}

/**
 * Waits until each server the first request should carry has connected or
 * ended its first attempt, or its time is up; then until their tools have
 * reached Pi. Returns the servers whose time ran out.
 */
export async function waitForFirstRequest(host: FirstRequestHost, wait: FirstRequestWait): Promise<string[]> {
  const config = host.config;
  if (!config.valid) return [];
  const candidates = config.servers.filter((entry) => firstRequestWaitOf(config, entry) > 0 && !host.offersCatalog(entry.name));
  const authorizing = await Promise.all(candidates.map((entry) => wait.needsAuthorization?.(entry).catch(() => false) ?? false));
  const servers = candidates
    .filter((_, index) => !authorizing[index])
    .map((entry) => ({ name: entry.name, until: wait.since + firstRequestWaitOf(config, entry) }));
  const pending = () =>
    wait.ended()
      ? []
      : servers.filter(
          (server) => Date.now() < server.until && !host.offersCatalog(server.name) && !attemptEnded(host.server(server.name)?.state),
        );
  for (let left = pending(); left.length > 0; left = pending())
    await wait.changes.next(Math.max(...left.map((server) => server.until)) - Date.now());
  if (wait.ended()) return [];
  const late = servers.filter((server) => !host.offersCatalog(server.name) && !attemptEnded(host.server(server.name)?.state));
  for (const server of late)
    host
      .server(server.name)
      ?.log.append(
        `[pi-mcp] the first model request went without this server's tools: it had not connected within ${server.until - wait.since} ms (firstRequestWaitMs)\n`,
      );
  await host.flushTools(Math.max(0, ...servers.map((server) => server.until)) - Date.now());
  return late.map((server) => server.name);
}
