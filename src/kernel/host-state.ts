/*
 * What a plugin keeps for one host (its subscriptions, its log writers, ...),
 * kept one way for every plugin: the plugin declares its state once with
 * `hostState`, and each host gets its own, created on first use and dropped
 * with the host. A host's context is one object for the host's whole life
 * (settings applied later change its fields, not its identity), so hooks
 * (`connection.host`), host lifecycle hooks (`host.context`) and commands
 * (`(await env.runtime.host()).context`) all find the same state.
 */
import type { HostContext } from "./types.ts";

const stores = new WeakMap<HostContext, Map<object, unknown>>();

/** A plugin's state of one host. */
export type HostState<T> = (host: HostContext) => T;

/** Declares a kind of per-host state; `create` makes a host's own on first use. */
export function hostState<T>(create: (host: HostContext) => T): HostState<T> {
  const key = {};
  return (host) => {
    let store = stores.get(host);
    if (!store) {
      store = new Map();
      stores.set(host, store);
    }
    if (!store.has(key)) store.set(key, create(host));
    return store.get(key) as T;
  };
}

const CLIENT_STATES = Symbol.for("pi-mcp.client-states");

/** A plugin's state of one MCP client. */
export interface ClientState<T> {
  get(client: object): T | undefined;
  set(client: object, value: T): void;
  has(client: object): boolean;
  delete(client: object): void;
}

/**
 * Declares a kind of per-client state (what a plugin told one server). A
 * pooled connection carries its client into the next session, whose plugin
 * modules Pi imported afresh (`/reload`, `/new`): the state is therefore kept
 * process-wide under `name` (stable across those copies, unlike a module's
 * own WeakMap), and goes with the client.
 */
export function clientState<T>(name: string): ClientState<T> {
  const global = globalThis as { [CLIENT_STATES]?: Map<string, WeakMap<object, unknown>> };
  global[CLIENT_STATES] ??= new Map();
  let states = global[CLIENT_STATES].get(name);
  if (!states) {
    states = new WeakMap();
    global[CLIENT_STATES].set(name, states);
  }
  const store = states;
  return {
    get: (client) => store.get(client) as T | undefined,
    set: (client, value) => void store.set(client, value),
    has: (client) => store.has(client),
    delete: (client) => void store.delete(client),
  };
}
