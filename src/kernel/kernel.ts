import { HookMap } from "tapable";
import { createHooks, HOOK_DEADLINES_MS, type HookDeadlines, type HookName, type KernelHooks } from "./hooks.ts";
import { PluginHookError, TapDeadlineError } from "./errors.ts";
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

export interface KernelConstruction {
  /** Deadlines per hook instead of HOOK_DEADLINES_MS (tests). */
  readonly hookDeadlinesMs?: HookDeadlines;
}

/**
 * The kernel owns the hooks. Every tap is wrapped so that a failure names
 * the plugin (the tap name) and the hook it failed in, and so that a tap of
 * a hook with a deadline (HOOK_DEADLINES_MS) that is still running at the
 * deadline fails the same way, instead of holding up everything that waits
 * for the hook (rollup names the plugin of an unfinished hook action too).
 */
export class Kernel {
  readonly hooks: KernelHooks;
  readonly plugins: readonly string[];
  private readonly applied: readonly KernelPlugin[];

  constructor(plugins: readonly KernelPlugin[], construction: KernelConstruction = {}) {
    this.hooks = createHooks();
    const deadlines = construction.hookDeadlinesMs ?? HOOK_DEADLINES_MS;
    for (const [hookName, hook] of Object.entries(this.hooks)) {
      const deadlineMs = deadlines[hookName as HookName];
      // A hook map's hooks (one per content type) are named with their key: "mapContent:resource".
      if (hook instanceof HookMap)
        (hook as unknown as HookMap<Interceptable>).intercept({
          factory: (key: unknown, inner) => nameTaps(inner, `${hookName}:${String(key)}`, deadlineMs),
        });
      else nameTaps(hook as unknown as Interceptable, hookName, deadlineMs);
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

/** Every tap of `hook` fails with an error naming its plugin and `hookName`, also one still running after `deadlineMs`. */
function nameTaps<H extends Interceptable>(hook: H, hookName: string, deadlineMs: number | undefined): H {
  hook.intercept({ register: (tap) => ({ ...tap, fn: wrapTap(tap.type, tap.name, hookName, tap.fn as AnyFn, deadlineMs) }) });
  return hook;
}

function wrapTap(type: string, plugin: string, hook: string, fn: AnyFn, deadlineMs: number | undefined): AnyFn {
  const named = (error: unknown) => (error instanceof PluginHookError ? error : new PluginHookError(plugin, hook, error));
  const fail = (error: unknown): never => {
    throw named(error);
  };
  if (type === "promise") {
    return (...args) => {
      let running: Promise<unknown>;
      try {
        running = Promise.resolve(fn(...args));
      } catch (error) {
        return fail(error);
      }
      return (deadlineMs === undefined ? running : withinDeadline(running, deadlineMs)).catch(fail);
    };
  }
  if (type === "async") {
    return (...args) => {
      const callback = args.pop() as (error?: unknown, result?: unknown) => void;
      // Answered once: by the tap, or by the deadline (what the tap says later is ignored).
      let answered = false;
      const answer = (error?: unknown, result?: unknown) => {
        if (answered) return;
        answered = true;
        clearTimeout(timer);
        if (error) callback(named(error));
        else callback(null, result);
      };
      const timer = deadlineMs === undefined ? undefined : setTimeout(() => answer(new TapDeadlineError(deadlineMs)), deadlineMs);
      try {
        fn(...args, answer);
      } catch (error) {
        answer(error);
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

/**
 * `running`, or a TapDeadlineError once `deadlineMs` passed first. A tap
 * given up is left to finish on its own: what it answers or throws later goes
 * nowhere (the race has settled). The deadline's timer keeps the process
 * alive while the tap runs, and no longer: a tap that waits on nothing the
 * event loop holds would otherwise end the process before anyone is told.
 */
function withinDeadline<T>(running: Promise<T>, deadlineMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new TapDeadlineError(deadlineMs)), deadlineMs);
  });
  return Promise.race([running, deadline]).finally(() => clearTimeout(timer));
}
