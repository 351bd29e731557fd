import type { CommandSpec, CommandEnvironment } from "../../src/kernel/commands.ts";
import { describeError, PiMcpError } from "../../src/kernel/errors.ts";
import type { Kernel, KernelPlugin } from "../../src/kernel/kernel.ts";
import type { FixedTool } from "../../src/kernel/services.ts";
import type { LiveConnection } from "../../src/kernel/types.ts";
import type { PluginHost } from "../../src/kernel/host.ts";
import { hostState } from "../../src/kernel/host-state.ts";
import type { McpSubscription } from "@modelcontextprotocol/client";
import type { CatalogItem, ResourceListMethod } from "../../src/kernel/protocol.ts";
import { inBackground, untilAborted } from "../../src/kernel/async.ts";
import { MESSAGE_TYPES, RESOURCE_TOOLS } from "../../src/kernel/pi-part.ts";
import { safeText, stripTerminalControls } from "../../src/safety/text.ts";
import { SUBSCRIPTION_ENTRY, desiredSubscriptions, subscriptionEntry } from "./subscriptions.ts";
import { keyedRecord } from "../../src/safety/keys.ts";

const UPDATE_NOTICE = MESSAGE_TYPES.resourceUpdate;
/** Repeated updates of one resource within this window make one notice. */
const NOTICE_WINDOW_MS = 1_000;
/** How long a session's end waits for a server to confirm an unsubscribe. */
const RELEASE_TIMEOUT_MS = 2_000;

/** What the plugin keeps for each host. */
interface ResourcesState {
  host?: PluginHost;
  readonly connections: Map<string, LiveConnection>;
  /** server → URIs subscribed on the live connection. */
  readonly active: Map<string, Set<string>>;
  toolsDefined?: boolean;
  /** server → the `subscriptions/listen` stream carrying its subscriptions (2026-07-28 peers). */
  readonly streams: Map<string, McpSubscription>;
  readonly noticed: Map<string, number>;
  /** server → URI → why the live connection refused to subscribe it (the last attempt; a later success clears it). */
  readonly refused: Map<string, Map<string, string>>;
}
const resourcesOf = hostState<ResourcesState>(() => ({ connections: new Map(), active: new Map(), streams: new Map(), noticed: new Map(), refused: new Map() }));

/**
 * Resources: three fixed Pi tools (active while a connected server offers
 * resources), `/mcp subscribe` and `/mcp unsubscribe` with desired
 * subscriptions kept in the session, and a notice for the next turn when a
 * subscribed resource changes. The host never reads or injects a resource on
 * its own.
 */
export class ResourcesPlugin implements KernelPlugin {
  readonly name = "resources";

  apply(kernel: Kernel): void {
    kernel.hooks.hostStart.tap(this.name, (host) => {
      const state = resourcesOf(host.context);
      state.host = host;
      host.context.services.session?.onBranchChange(() => inBackground(() => syncSubscriptions(state), logToAll(state, "syncing the resource subscriptions")));
    });
    kernel.hooks.clientCreated.tap(this.name, (connection) => {
      const state = resourcesOf(connection.host);
      connection.client.setNotificationHandler("notifications/resources/updated", (notification) => {
        const { uri } = notification.params;
        // Only what this session subscribed: a connection handed on by an earlier session may still hear about its URIs.
        if (connection.isCurrent() && state.active.get(connection.server.name)?.has(uri)) queueUpdateNotice(state, connection.server.name, uri);
      });
    });
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
      inBackground(() => forget(state, connection.server.name), (error) => connection.log(`[pi-mcp] closing a subscription stream failed: ${describeError(error)}\n`));
      updateToolActivity(state);
    });
    kernel.hooks.statusLines.tap(this.name, (lines, host) => {
      const subscriptions = [...resourcesOf(host).active].flatMap(([server, uris]) => [...uris].map((uri) => `${server} ${uri}`)).sort();
      return subscriptions.length === 0 ? lines : [...lines, "Active resource subscriptions:", ...subscriptions.map((line) => `  ${stripTerminalControls(line)}`)];
    });
  }

  readonly commands: readonly CommandSpec[] = [subscriptionCommand("subscribe"), subscriptionCommand("unsubscribe")];
}

/** Logs a failure of work for every server with resources (their subscriptions) to each server's retained log. */
function logToAll(state: ResourcesState, what: string): (error: unknown) => void {
  return (error) => {
    for (const connection of state.connections.values()) connection.log(`[pi-mcp] ${what} failed: ${describeError(error)}\n`);
  };
}

/** The fixed tools reach Pi with the first connected server that offers resources. */
function defineTools(state: ResourcesState): void {
  if (state.toolsDefined || !state.host) return;
  state.toolsDefined = true;
  for (const tool of fixedTools(state, state.host)) state.host.context.services.piTools?.define(tool);
}

function updateToolActivity(state: ResourcesState): void {
  const any = state.connections.size > 0;
  for (const name of Object.values(RESOURCE_TOOLS)) state.host?.context.services.piTools?.setActive(name, any);
}

function queueUpdateNotice(state: ResourcesState, server: string, uri: string): void {
  const key = `${server}\u0000${uri}`;
  const now = Date.now();
  if (now - (state.noticed.get(key) ?? 0) < NOTICE_WINDOW_MS) return;
  state.noticed.set(key, now);
  state.host?.context.services.session?.queueMessage({
    customType: UPDATE_NOTICE,
    content: `[MCP resource update] Server "${server}" reports that resource ${uri} changed. It has not been read: use read_mcp_resource if you need its new content.`,
    details: { version: 1, server, uri },
  });
}

/** Drops what was subscribed on a connection that is gone or new (its stream closes with it). */
function forget(state: ResourcesState, server: string): Promise<void> {
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
async function releaseSubscriptions(state: ResourcesState, server: string, connection: LiveConnection): Promise<void> {
  const uris = [...(state.active.get(server) ?? [])];
  const listening = state.streams.has(server);
  const deadline = AbortSignal.timeout(RELEASE_TIMEOUT_MS);
  const release = async () => {
    await forget(state, server);
    if (listening) return; // closing the stream ended them
    await Promise.all(uris.map((uri) => connection.client.unsubscribeResource({ uri }, { timeout: RELEASE_TIMEOUT_MS, signal: deadline }).catch(() => undefined)));
  };
  await untilAborted(release(), deadline).catch(() => connection.log(`[pi-mcp] ending the resource subscriptions took longer than ${RELEASE_TIMEOUT_MS} ms; left to the server\n`));
}

/** Brings live subscriptions in line with the desired ones on the active branch. */
async function syncSubscriptions(state: ResourcesState): Promise<void> {
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

/** 2025-era peers: one `resources/subscribe` (or unsubscribe) per changed URI. */
async function subscribeEach(connection: LiveConnection, want: ReadonlySet<string>, have: Set<string>, refused: Map<string, string>): Promise<void> {
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
async function listenFor(state: ResourcesState, connection: LiveConnection, want: ReadonlySet<string>, have: Set<string>, refused: Map<string, string>): Promise<void> {
  const server = connection.server.name;
  if (want.size === have.size && [...want].every((uri) => have.has(uri))) return;
  const previous = state.streams.get(server);
  state.streams.delete(server);
  have.clear();
  if (want.size > 0) {
    try {
      const stream = await connection.client.listen({ resourceSubscriptions: [...want] }, { timeout: connection.requestTimeoutMs });
      for (const uri of stream.honoredFilter.resourceSubscriptions ?? []) have.add(uri);
      refuse(connection, refused, [...want].filter((uri) => !have.has(uri)), "the server did not accept it");
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

function subscriptionCommand(action: "subscribe" | "unsubscribe"): CommandSpec {
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
    examples: [{ line: `${action} docs file:///notes/todo.md`, description: action === "subscribe" ? "Note each change of that resource for the next turn" : "Stop noting its changes" }],
    async run(input, env) {
      const [server, uri] = input.positionals as [string, string];
      const state = await sessionState(env);
      const session = state.host?.context.services.session;
      if (!session) throw new PiMcpError("failed", "subscriptions need a Pi session");
      const connection = state.connections.get(server);
      if (action === "subscribe" && connection && !connection.client.getServerCapabilities()?.resources?.subscribe) {
        throw new PiMcpError("failed", `server "${server}" does not support resource subscriptions`);
      }
      session.append(SUBSCRIPTION_ENTRY, subscriptionEntry(action, server, uri));
      await syncSubscriptions(state);
      const live = state.active.get(server)?.has(uri) === true;
      const refusal = action === "subscribe" && !live ? state.refused.get(server)?.get(uri) : undefined;
      if (refusal !== undefined) {
        // The connected server said no: nothing was subscribed, and the session does not keep asking.
        session.append(SUBSCRIPTION_ENTRY, subscriptionEntry("unsubscribe", server, uri));
        throw new PiMcpError("failed", `server "${server}" refused the subscription to ${stripTerminalControls(uri)}: ${refusal}`);
      }
      const note = action === "subscribe" && !live ? " (it takes effect when the server connects)" : "";
      return { exitCode: 0, output: `${action === "subscribe" ? "Subscribed to" : "Unsubscribed from"} ${uri} on "${server}"${note}` };
    },
  };
}

async function sessionState(env: CommandEnvironment): Promise<ResourcesState> {
  if (!env.runtime) throw new PiMcpError("failed", "this command needs a running Pi session");
  return resourcesOf((await env.runtime.host()).context);
}

/** The three fixed tools; each names its server in every line it returns. */
function fixedTools(state: ResourcesState, host: PluginHost): FixedTool[] {
  const serverArg = { type: "string", description: "MCP server name (omit for all servers)" };
  const pick = (server: unknown): [string, LiveConnection][] => {
    // A session that handed its connections on (or ended) starts nothing through them.
    const current = [...state.connections].filter(([, connection]) => connection.isCurrent());
    if (server === undefined) return current.sort(([a], [b]) => a.localeCompare(b));
    const found = current.find(([name]) => name === String(server));
    if (!found) throw new PiMcpError("not_found", `no connected MCP server "${String(server)}" offers resources`);
    return [found];
  };
  /**
   * One list across the chosen servers, from each connection's catalog. A
   * server whose list fails gets a line naming the method and the cause; the
   * others are listed all the same. Asking one server that fails is an error.
   */
  const list = async (method: ResourceListMethod, key: string, args: Record<string, unknown>, signal: AbortSignal | undefined) => {
    const lines: string[] = [];
    const found = keyedRecord<readonly CatalogItem[]>();
    const failures = keyedRecord<string>();
    const chosen = pick(args.server);
    for (const [server, connection] of chosen) {
      let items: readonly CatalogItem[];
      try {
        items = await connection.request(method, () => untilAborted(connection.resourceList(method), signal), { signal });
      } catch (error) {
        if (chosen.length === 1 || signal?.aborted) throw error;
        failures[server] = describeError(error);
        lines.push(`${server}: ${describeError(error)}`);
        continue;
      }
      found[server] = items;
      for (const item of items) lines.push(`${server}: ${String(item.uri ?? item.uriTemplate)}${item.name ? ` (${String(item.name)}${item.mimeType ? `, ${String(item.mimeType)}` : ""})` : ""}${item.description ? ` — ${String(item.description)}` : ""}`);
    }
    // Long listings are cut to Pi's limits like any result; the whole listing goes to a Result Spill.
    const origin = { server: typeof args.server === "string" ? args.server : "all-servers", operation: method };
    const details = { [key]: found, ...(Object.keys(failures).length > 0 && { failures }) };
    return host.results.finish(origin, { blocks: [], trailer: [{ type: "text", text: lines.join("\n") || "No resources." }], details, isError: false });
  };
  return [
    {
      name: RESOURCE_TOOLS.list,
      label: "MCP: list resources",
      description: "List the resources that connected MCP servers offer (server: uri (name, type) — description).",
      parameters: { type: "object", properties: { server: serverArg } },
      execute: (args, options) => list("resources/list", "resources", args, options.signal),
    },
    {
      name: RESOURCE_TOOLS.templates,
      label: "MCP: list resource templates",
      description: "List the URI templates of resources that connected MCP servers can read.",
      parameters: { type: "object", properties: { server: serverArg } },
      execute: (args, options) => list("resources/templates/list", "resourceTemplates", args, options.signal),
    },
    {
      name: RESOURCE_TOOLS.read,
      label: "MCP: read resource",
      description: "Read one resource from an MCP server by its URI.",
      parameters: { type: "object", properties: { server: { type: "string", description: "MCP server name" }, uri: { type: "string", description: "Resource URI" } }, required: ["server", "uri"] },
      async execute(args, options) {
        const [[server, connection]] = pick(args.server) as [[string, LiveConnection]];
        const uri = String(args.uri);
        const result = await connection.request(
          `resources/read ${uri}`,
          (client) => client.readResource({ uri }, { timeout: connection.requestTimeoutMs, ...(options.signal && { signal: options.signal }) }),
          { signal: options.signal },
        );
        const origin = { server, operation: uri };
        const content = result.contents.map((resource) => ({ type: "resource", resource }));
        return host.results.finish(origin, await host.results.map(origin, { content }, { server, uri }));
      },
    },
  ];
}
