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
    if (!store) stores.set(host, (store = new Map()));
    if (!store.has(key)) store.set(key, create(host));
    return store.get(key) as T;
  };
}
