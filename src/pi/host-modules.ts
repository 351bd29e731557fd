/**
 * Pi's own modules, as the Pi entry received them through Pi's extension
 * loader (its aliases, or the modules embedded in a Pi binary), for the
 * built core (dist/pi/core.mjs). Node loads that file natively, where a
 * bare `@earendil-works/...` import would not find Pi (an installed package
 * has no copy of its peers) or would find another copy of it; its build
 * points those imports at src/pi/host-shims/, which read them from here.
 * The entry provides them before it loads the core. On `globalThis`: the
 * entry and the built core are two copies of this module.
 */
import type * as PiCodingAgent from "@earendil-works/pi-coding-agent";
import type * as PiTui from "@earendil-works/pi-tui";

export interface PiHostModules {
  readonly agent: typeof PiCodingAgent;
  readonly tui: typeof PiTui;
}

const KEY = Symbol.for("pi-mcp.pi-host-modules.v1");
type Holder = { [KEY]?: PiHostModules };

export function providePiHostModules(modules: PiHostModules): void {
  (globalThis as Holder)[KEY] = modules;
}

export function piHostModules(): PiHostModules {
  const modules = (globalThis as Holder)[KEY];
  if (!modules) throw new Error("pi-mcp: the built core was loaded before the Pi entry provided Pi's modules");
  return modules;
}
