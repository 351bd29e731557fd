/**
 * What the Pi entry decides about the first agent start before the rest of
 * pi-mcp is loaded: only cheap checks (raw settings files, no validation).
 * The wait itself is the host's (src/runtime/first-request.ts).
 */
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { agentDir } from "../config/paths.ts";
import { firstRequestBound } from "../config/settings-stamp.ts";
import type { CachedStart } from "../runtime/catalog-cache.ts";

/** Whether Pi runs without a terminal UI (print, JSON and RPC modes): only there does the first request wait for servers. */
export function runsWithoutTerminal(ctx: Pick<ExtensionContext, "mode" | "hasUI">): boolean {
  return (ctx.mode as string | undefined) === undefined ? !ctx.hasUI : ctx.mode !== "tui";
}

/**
 * How long the first agent start may wait for the rest of pi-mcp to load and
 * start its servers (0: not at all), as far as the entry can tell before it
 * is loaded: Pi runs without a terminal UI, the known catalogs (if any) do
 * not cover every server it would wait for, and the raw settings name a
 * server and do not turn the wait off (src/config/settings-stamp.ts
 * firstRequestBound). The rest, once loaded, decides exactly
 * (src/pi/extension.ts, src/runtime/first-request.ts).
 */
export function firstStartBound(
  ctx: Pick<ExtensionContext, "mode" | "hasUI" | "cwd">,
  known: CachedStart | undefined,
  agent: string = agentDir(),
): number {
  return runsWithoutTerminal(ctx) && known?.complete !== true ? firstRequestBound(agent, ctx.cwd).startUp : 0;
}
