/**
 * Pi's own modules, as the root index.ts received them through Pi's
 * extension loader (its aliases, or the modules embedded in a Pi binary), for
 * the build that entry then loads (dist/pi/entry.mjs and its chunks). Node
 * loads those files natively, where a bare `@earendil-works/...` import would
 * not find Pi (an installed package has no copy of its peers) or would find
 * another copy of it; the build points those imports at src/pi/host-shims/,
 * which read them from here. On `globalThis`: the root entry's copy of this
 * module (from source) and the build's are two copies.
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
  if (!modules) throw new Error("pi-mcp: the build was loaded before the root entry provided Pi's modules");
  return modules;
}
