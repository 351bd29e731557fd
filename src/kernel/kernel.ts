import { HookMap } from "tapable";
import { createHooks, type KernelHooks } from "./hooks.ts";
import { PluginHookError } from "./errors.ts";
import type { CommandSpec } from "./commands.ts";
import type { PiPart } from "./pi-part.ts";

/** An internal or third-party plugin: `apply` only taps hooks. */
export interface KernelPlugin {
  readonly name: string;
  apply(kernel: Kernel): void;
  /** `/mcp` commands this feature owns (e.g. `prompt`, `logs`). */
  readonly commands?: readonly CommandSpec[];
  /** Its part in Pi's UI, loaded on first use and only inside Pi (see pi-part.ts). */
  readonly piPart?: () => Promise<PiPart>;
}

type AnyFn = (...args: unknown[]) => unknown;

/** Named stages for tap ordering (lower runs first). */
export const STAGE = Object.freeze({
  /** Third-party overrides that must see a value before the built-ins. */
  BEFORE_BUILTIN: -100,
  BUILTIN: 0,
  /** Fallbacks that only act on what nobody else handled. */
  FALLBACK: 100,
});

/**
 * The kernel owns the hooks. Every tap is wrapped so that a failure names
 * the plugin (the tap name) and the hook it failed in.
 */
export class Kernel {
  readonly hooks: KernelHooks;
  readonly plugins: readonly string[];
  private readonly applied: readonly KernelPlugin[];

  constructor(plugins: readonly KernelPlugin[]) {
    this.hooks = createHooks();
    for (const [hookName, hook] of Object.entries(this.hooks)) {
      // A hook map's hooks (one per content type) are named with their key: "mapContent:resource".
      if (hook instanceof HookMap) (hook as unknown as HookMap<Interceptable>).intercept({ factory: (key: unknown, inner) => nameTaps(inner, `${hookName}:${String(key)}`) });
      else nameTaps(hook as unknown as Interceptable, hookName);
    }
    const names: string[] = [];
    for (const plugin of plugins) {
      if (names.includes(plugin.name)) throw new Error(`plugin "${plugin.name}" is listed twice`);
      plugin.apply(this);
      names.push(plugin.name);
    }
    this.plugins = Object.freeze(names);
    this.applied = Object.freeze([...plugins]);
  }

  has(pluginName: string): boolean {
    return this.plugins.includes(pluginName);
  }

  /** The Pi parts of every applied plugin, in plugin order (loaded on first use). */
  piParts(): Promise<PiPart[]> {
    return Promise.all(this.applied.flatMap((plugin) => (plugin.piPart ? [plugin.piPart()] : [])));
  }

  /** The commands of every applied plugin. */
  get commands(): CommandSpec[] {
    return this.applied.flatMap((plugin) => plugin.commands ?? []);
  }
}

/** What every hook offers to interceptors (tapable's own type is per hook). */
interface Interceptable {
  intercept(interceptor: { register: (tap: { type: string; name: string; fn: unknown }) => unknown }): void;
}

/** Every tap of `hook` fails with an error naming its plugin and `hookName`. */
function nameTaps<H extends Interceptable>(hook: H, hookName: string): H {
  hook.intercept({ register: (tap) => ({ ...tap, fn: wrapTap(tap.type, tap.name, hookName, tap.fn as AnyFn) }) });
  return hook;
}

function wrapTap(type: string, plugin: string, hook: string, fn: AnyFn): AnyFn {
  const named = (error: unknown) => (error instanceof PluginHookError ? error : new PluginHookError(plugin, hook, error));
  const fail = (error: unknown): never => {
    throw named(error);
  };
  if (type === "promise") {
    return (...args) => {
      try {
        return Promise.resolve(fn(...args)).catch(fail);
      } catch (error) {
        return fail(error);
      }
    };
  }
  if (type === "async") {
    return (...args) => {
      const callback = args.pop() as (error?: unknown, result?: unknown) => void;
      try {
        fn(...args, (error?: unknown, result?: unknown) => (error ? callback(named(error)) : callback(null, result)));
      } catch (error) {
        callback(named(error));
      }
    };
  }
  return (...args) => {
    try {
      return fn(...args);
    } catch (error) {
      return fail(error);
    }
  };
}
