/**
 * The order in which Pi declares pi-mcp's tools. Pi keeps the active tools
 * in the order they became active (a provider's prompt cache depends on it),
 * so the order would follow which server connected first, and differ from a
 * start that registered the known catalogs at load. Before each agent run the
 * entry puts them in the host's canonical order (src/runtime/host.ts,
 * offeredTools): Pi's other tools as they are, then pi-mcp's direct tools,
 * then the Pi tools that reach the others (`codemode`, `tool_search`), then
 * the tools `tool_search` loaded, as they came. Nothing is changed while the
 * order is already so, nor while registrations are still under way.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

type PiTools = Pick<ExtensionAPI, "getActiveTools" | "setActiveTools" | "getAllTools">;

export interface OfferedTools {
  /** pi-mcp's direct tools, in the canonical order. */
  readonly direct: readonly string[];
  /** pi-mcp's tools that are not declared unless loaded (deferred, codemode). */
  readonly undeclared: readonly string[];
  /** The Pi tools pi-mcp needs to reach those. */
  readonly reaching: readonly string[];
}

/** What `tools` (Pi name and the exposure Pi registered it with, in the canonical order) come to. */
export function offeredToolsOf(tools: Iterable<readonly [string, string]>): OfferedTools {
  const direct: string[] = [];
  const undeclared: string[] = [];
  const reaching = new Set<string>();
  for (const [name, exposure] of tools) {
    if (exposure === "direct") direct.push(name);
    else if (exposure === "deferred" || exposure === "codemode") {
      undeclared.push(name);
      reaching.add(exposure === "deferred" ? "tool_search" : "codemode");
    }
  }
  return { direct, undeclared, reaching: [...reaching].sort() };
}

/** The active tools in the canonical order, or undefined while some direct tool is not active yet (still registering). */
export function canonicalOrder(current: readonly string[], offered: OfferedTools, available: ReadonlySet<string>): string[] | undefined {
  const active = new Set(current);
  if (offered.direct.some((name) => !active.has(name))) return undefined;
  const reaching = offered.reaching.filter((name) => available.has(name));
  const undeclared = new Set(offered.undeclared);
  const placed = new Set([...offered.direct, ...reaching, ...undeclared]);
  const others = current.filter((name) => !placed.has(name));
  const loaded = current.filter((name) => undeclared.has(name));
  return [...others, ...offered.direct, ...reaching, ...loaded];
}

/** Puts Pi's active tools in the canonical order (see the module comment); returns whether it changed them. */
export function keepToolOrder(pi: PiTools, offered: OfferedTools): boolean {
  const current = pi.getActiveTools();
  const desired = canonicalOrder(current, offered, new Set(pi.getAllTools().map((tool) => tool.name)));
  if (!desired || (desired.length === current.length && desired.every((name, index) => current[index] === name))) return false;
  // Pi keeps the order of tools that stay active and appends the others: keep the common start, add the rest in order.
  let same = 0;
  while (same < current.length && same < desired.length && current[same] === desired[same]) same++;
  pi.setActiveTools(current.slice(0, same));
  pi.setActiveTools(desired);
  return true;
}
