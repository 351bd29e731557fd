/*
 * `/mcp subscribe <server> <uri>` and `/mcp unsubscribe <server> <uri>`: the
 * wish is recorded in the session first (session-entries.ts), then the live
 * subscriptions follow it. A connected server that refuses makes the command
 * fail with its answer, and the wish is withdrawn; a server not connected yet
 * is asked when it connects.
 */
import type { CommandEnvironment, CommandSpec } from "../../src/kernel/commands.ts";
import { PiMcpError } from "../../src/kernel/errors.ts";
import { stripTerminalControls } from "../../src/safety/text.ts";
import { syncSubscriptions } from "./live-subscriptions.ts";
import { SUBSCRIPTION_ENTRY, subscriptionEntry } from "./session-entries.ts";
import { resourcesOf, type ResourcesState } from "./state.ts";

export function subscriptionCommand(action: "subscribe" | "unsubscribe"): CommandSpec {
  return {
    name: action,
    surfaces: ["pi"],
    summary: action === "subscribe" ? "Subscribe to a resource; a change is noted for the next turn" : "Stop a resource subscription",
    usage: `${action} <server> <uri>`,
    positionals: [
      { name: "server", description: "Server name", required: true },
      { name: "uri", description: "Resource URI", required: true },
    ],
    options: {},
    examples: [
      {
        line: `${action} docs file:///notes/todo.md`,
        description: action === "subscribe" ? "Note each change of that resource for the next turn" : "Stop noting its changes",
      },
    ],
    async run(input, env) {
      const [server, uri] = input.positionals as [string, string];
      const state = await sessionState(env);
      const session = state.host?.context.services.session;
      if (!session) throw new PiMcpError("needs_session", "subscriptions need a Pi session");
      const connection = state.connections.get(server);
      if (action === "subscribe" && connection && !connection.client.getServerCapabilities()?.resources?.subscribe) {
        throw new PiMcpError("not_supported", `server "${server}" does not support resource subscriptions`);
      }
      session.append(SUBSCRIPTION_ENTRY, subscriptionEntry(action, server, uri));
      await syncSubscriptions(state);
      const live = state.active.get(server)?.has(uri) === true;
      const refusal = action === "subscribe" && !live ? state.refused.get(server)?.get(uri) : undefined;
      if (refusal !== undefined) {
        // The connected server said no: nothing was subscribed, and the session does not keep asking.
        session.append(SUBSCRIPTION_ENTRY, subscriptionEntry("unsubscribe", server, uri));
        throw new PiMcpError("refused", `server "${server}" refused the subscription to ${stripTerminalControls(uri)}: ${refusal}`);
      }
      const note = action === "subscribe" && !live ? " (it takes effect when the server connects)" : "";
      return { exitCode: 0, output: `${action === "subscribe" ? "Subscribed to" : "Unsubscribed from"} ${uri} on "${server}"${note}` };
    },
  };
}

async function sessionState(env: CommandEnvironment): Promise<ResourcesState> {
  if (!env.runtime) throw new PiMcpError("needs_session", "this command needs a running Pi session");
  return resourcesOf((await env.runtime.host()).context);
}
