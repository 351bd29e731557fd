/*
 * The subscriptions a person asked for, as the session keeps them: one
 * versioned custom entry per `/mcp subscribe` or `/mcp unsubscribe`,
 * replayed from the active branch (so they follow `/resume`, `/fork` and
 * `/tree`). What is live on each connection is live-subscriptions.ts's.
 */
/** Custom session entry that records one subscribe or unsubscribe decision. */
export const SUBSCRIPTION_ENTRY = "pi-mcp.subscription";
const VERSION = 1;

interface SubscriptionEntry {
  readonly version: number;
  readonly action: "subscribe" | "unsubscribe";
  readonly server: string;
  readonly uri: string;
}

export function subscriptionEntry(action: "subscribe" | "unsubscribe", server: string, uri: string): SubscriptionEntry {
  return { version: VERSION, action, server, uri };
}

/** Replays the entries of the active branch, oldest first: server → desired URIs. Unknown versions are ignored. */
export function desiredSubscriptions(entries: readonly unknown[]): Map<string, Set<string>> {
  const desired = new Map<string, Set<string>>();
  for (const entry of entries) {
    const data = entry as Partial<SubscriptionEntry> | undefined;
    if (data?.version !== VERSION || typeof data.server !== "string" || typeof data.uri !== "string") continue;
    const uris = desired.get(data.server) ?? new Set<string>();
    if (data.action === "subscribe") uris.add(data.uri);
    else uris.delete(data.uri);
    desired.set(data.server, uris);
  }
  return desired;
}
