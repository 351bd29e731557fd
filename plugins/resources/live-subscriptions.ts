/*
 * The subscriptions live on each connection, brought in line with the ones
 * the session asked for (session-entries.ts): one `resources/subscribe` per
 * URI on 2025-era peers, one `subscriptions/listen` stream for all of a
 * server's URIs on 2026-07-28 peers. What a server refuses is remembered for
 * the command that asked and written to the server's log.
 */
import { describeError } from "../../src/kernel/errors.ts";
import { inBackground, untilAborted } from "../../src/kernel/async.ts";
import type { LiveConnection, Redactor } from "../../src/kernel/types.ts";
import { safeText } from "../../src/safety/text.ts";
import { SUBSCRIPTION_ENTRY, desiredSubscriptions } from "./session-entries.ts";
import type { ResourcesState } from "./state.ts";

/** How long a session's end waits for a server to confirm an unsubscribe. */
const RELEASE_TIMEOUT_MS = 2_000;

/** Brings live subscriptions in line with the desired ones on the active branch. */
export async function syncSubscriptions(state: ResourcesState): Promise<void> {
  const desired = desiredSubscriptions(state.host?.context.services.session?.entries(SUBSCRIPTION_ENTRY) ?? []);
  for (const [server, connection] of state.connections) {
    if (!connection.client.getServerCapabilities()?.resources?.subscribe) continue;
    const want = desired.get(server) ?? new Set<string>();
    const have = state.active.get(server) ?? new Set<string>();
    const refused = new Map<string, string>();
    if (connection.client.getProtocolEra() === "modern") await listenFor(state, connection, want, have, refused);
    else await subscribeEach(connection, want, have, refused);
    state.active.set(server, have);
    state.refused.set(server, refused);
  }
}

/** Drops what was subscribed on a connection that is gone or new (its stream closes with it). */
export function forget(state: ResourcesState, server: string): Promise<void> {
  state.active.delete(server);
  const stream = state.streams.get(server);
  state.streams.delete(server);
  return stream ? stream.close().catch(() => undefined) : Promise.resolve();
}

/**
 * Ends one server's subscriptions of this session: best effort and briefly
 * (at most RELEASE_TIMEOUT_MS in all), since the session is ending and a
 * server that stopped answering must not hold up `/reload` or quitting.
 */
export async function releaseSubscriptions(state: ResourcesState, server: string, connection: LiveConnection): Promise<void> {
  const uris = [...(state.active.get(server) ?? [])];
  const listening = state.streams.has(server);
  const deadline = AbortSignal.timeout(RELEASE_TIMEOUT_MS);
  const release = async () => {
    await forget(state, server);
    if (listening) return; // closing the stream ended them
    await Promise.all(
      uris.map((uri) =>
        connection.client.unsubscribeResource({ uri }, { timeout: RELEASE_TIMEOUT_MS, signal: deadline }).catch(() => undefined),
      ),
    );
  };
  await untilAborted(release(), deadline).catch(() =>
    connection.log(`[pi-mcp] ending the resource subscriptions took longer than ${RELEASE_TIMEOUT_MS} ms; left to the server\n`),
  );
}

/** The `/mcp status` lines of the active subscriptions: sorted, made safe to show (redacted, no terminal controls). */
export function subscriptionStatusLines(state: ResourcesState, redact: Redactor): string[] {
  const subscriptions = [...state.active].flatMap(([server, uris]) => [...uris].map((uri) => `${server} ${uri}`)).sort();
  return subscriptions.length === 0
    ? []
    : ["Active resource subscriptions:", ...subscriptions.map((line) => `  ${safeText(line, redact)}`)];
}

/** 2025-era peers: one `resources/subscribe` (or unsubscribe) per changed URI. */
async function subscribeEach(
  connection: LiveConnection,
  want: ReadonlySet<string>,
  have: Set<string>,
  refused: Map<string, string>,
): Promise<void> {
  for (const uri of want) {
    if (have.has(uri)) continue;
    await connection.client.subscribeResource({ uri }, { timeout: connection.requestTimeoutMs }).then(
      () => have.add(uri),
      (error: unknown) => refuse(connection, refused, [uri], describeError(error)),
    );
  }
  for (const uri of have) {
    if (want.has(uri)) continue;
    await connection.client.unsubscribeResource({ uri }, { timeout: connection.requestTimeoutMs }).catch(() => undefined);
    have.delete(uri);
  }
}

/**
 * 2026-07-28 peers: subscriptions travel in one `subscriptions/listen` stream
 * whose filter names every URI. A changed set opens a new stream first, then
 * closes the old one, so no update falls between them. The server may honor
 * fewer URIs than asked for; only those count as active.
 */
async function listenFor(
  state: ResourcesState,
  connection: LiveConnection,
  want: ReadonlySet<string>,
  have: Set<string>,
  refused: Map<string, string>,
): Promise<void> {
  const server = connection.server.name;
  if (want.size === have.size && [...want].every((uri) => have.has(uri))) return;
  const previous = state.streams.get(server);
  state.streams.delete(server);
  have.clear();
  if (want.size > 0) {
    try {
      const stream = await connection.client.listen({ resourceSubscriptions: [...want] }, { timeout: connection.requestTimeoutMs });
      for (const uri of stream.honoredFilter.resourceSubscriptions ?? []) have.add(uri);
      refuse(
        connection,
        refused,
        [...want].filter((uri) => !have.has(uri)),
        "the server did not accept it",
      );
      state.streams.set(server, stream);
      inBackground(
        () =>
          stream.closed.then((cause) => {
            if (cause === "local" || state.streams.get(server) !== stream) return;
            // The server ended it: nothing is subscribed any more (a reconnect or the next change opens a new one).
            state.streams.delete(server);
            state.active.get(server)?.clear();
            connection.log(`[pi-mcp] the resource subscription stream ended (${cause})\n`);
          }),
        (error) => connection.log(`[pi-mcp] the resource subscription stream failed: ${describeError(error)}\n`),
      );
    } catch (error) {
      refuse(connection, refused, [...want], describeError(error));
    }
  }
  await previous?.close().catch(() => undefined);
}

/** Notes why the server refused `uris` (for the command that asked) in its log. */
function refuse(connection: LiveConnection, refused: Map<string, string>, uris: readonly string[], why: string): void {
  const text = safeText(why, connection.host.redact);
  for (const uri of uris) {
    refused.set(uri, text);
    connection.log(`[pi-mcp] subscribe ${uri} failed: ${text}\n`);
  }
}
