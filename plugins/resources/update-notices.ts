/*
 * Resource Update Notices: a subscribed resource changed, so a notice naming
 * the server and URI is queued for the next turn. The resource is not read:
 * the notice says so, and the model reads it with read_mcp_resource if it
 * needs to.
 */
import { MESSAGE_TYPES } from "../../src/kernel/pi-part.ts";
import type { LiveConnection } from "../../src/kernel/types.ts";
import type { ResourcesState } from "./state.ts";

/** Repeated updates of one resource within this window make one notice. */
const NOTICE_WINDOW_MS = 1_000;

/** Queues a notice for `notifications/resources/updated` about a URI this session subscribed on this connection. */
export function noticeUpdates(state: ResourcesState, connection: LiveConnection): void {
  connection.client.setNotificationHandler("notifications/resources/updated", (notification) => {
    const { uri } = notification.params;
    // Only what this session subscribed: a connection handed on by an earlier session may still hear about its URIs.
    if (connection.isCurrent() && state.active.get(connection.server.name)?.has(uri)) queueUpdateNotice(state, connection.server.name, uri);
  });
}

function queueUpdateNotice(state: ResourcesState, server: string, uri: string): void {
  const key = `${server}\u0000${uri}`;
  const now = Date.now();
  if (now - (state.noticed.get(key) ?? 0) < NOTICE_WINDOW_MS) return;
  state.noticed.set(key, now);
  state.host?.context.services.session?.queueMessage({
    customType: MESSAGE_TYPES.resourceUpdate,
    content: `[MCP resource update] Server "${server}" reports that resource ${uri} changed. It has not been read: use read_mcp_resource if you need its new content.`,
    details: { version: 1, server, uri },
  });
}
