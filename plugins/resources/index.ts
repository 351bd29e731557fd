/*
 * MCP Resources: three fixed Pi tools (active while a connected server offers
 * resources: fixed-tools.ts), `/mcp subscribe` and `/mcp unsubscribe` with
 * desired subscriptions kept in the session (commands.ts,
 * session-entries.ts) and made live on each connection
 * (live-subscriptions.ts), and a notice for the next turn when a subscribed
 * resource changes (update-notices.ts). The host never reads or injects a
 * resource on its own. This file only wires them to the kernel's hooks.
 */
import { describeError } from "../../src/kernel/errors.ts";
import type { CommandSpec } from "../../src/kernel/commands.ts";
import { inBackground } from "../../src/kernel/async.ts";
import type { Kernel, KernelPlugin } from "../../src/kernel/kernel.ts";
import { subscriptionCommand } from "./commands.ts";
import { defineTools, updateToolActivity } from "./fixed-tools.ts";
import { forget, releaseSubscriptions, subscriptionStatusLines, syncSubscriptions } from "./live-subscriptions.ts";
import { logToAll, resourcesOf } from "./state.ts";
import { noticeUpdates } from "./update-notices.ts";

export class ResourcesPlugin implements KernelPlugin {
  readonly name = "resources";
  readonly commands: readonly CommandSpec[] = [subscriptionCommand("subscribe"), subscriptionCommand("unsubscribe")];

  apply(kernel: Kernel): void {
    kernel.hooks.hostStart.tap(this.name, (host) => {
      const state = resourcesOf(host.context);
      state.host = host;
      host.context.services.session?.onBranchChange(() =>
        inBackground(() => syncSubscriptions(state), logToAll(state, "syncing the resource subscriptions")),
      );
    });
    kernel.hooks.clientCreated.tap(this.name, (connection) => noticeUpdates(resourcesOf(connection.host), connection));
    // The session's subscriptions end with it, also on a connection the next session takes over.
    kernel.hooks.hostShutdown.tapPromise(this.name, async (host) => {
      const state = resourcesOf(host.context);
      await Promise.all([...state.connections].map(([server, connection]) => releaseSubscriptions(state, server, connection)));
      state.connections.clear();
    });
    kernel.hooks.serverConnected.tapPromise(this.name, async (connection) => {
      if (!connection.client.getServerCapabilities()?.resources) return;
      const state = resourcesOf(connection.host);
      defineTools(state);
      state.connections.set(connection.server.name, connection);
      inBackground(() => forget(state, connection.server.name), logToAll(state, "closing a subscription stream"));
      updateToolActivity(state);
      // The connection stands whatever its subscriptions do.
      await syncSubscriptions(state).catch(logToAll(state, "syncing the resource subscriptions"));
    });
    kernel.hooks.serverDisconnected.tap(this.name, (connection) => {
      const state = resourcesOf(connection.host);
      state.connections.delete(connection.server.name);
      inBackground(
        () => forget(state, connection.server.name),
        (error) => connection.log(`[pi-mcp] closing a subscription stream failed: ${describeError(error)}\n`),
      );
      updateToolActivity(state);
    });
    kernel.hooks.statusLines.tap(this.name, (lines, host) => [...lines, ...subscriptionStatusLines(resourcesOf(host), host.redact)]);
  }
}
