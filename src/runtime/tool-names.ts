import { createHash } from "node:crypto";

/** What model providers accept as a tool name. */
export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
export const MAX_TOOL_NAME = 64;
const SUFFIX_HEX = 8;

/** Replaces every character providers reject and truncates to 64. */
export function toolNameCandidate(name: string): string {
  const safe = name.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, MAX_TOOL_NAME);
  return safe.length > 0 ? safe : "_";
}

/** A stable suffix for one (server, tool) pair, used only where names collide. */
export function withHashSuffix(candidate: string, server: string, tool: string, extraHex = 0): string {
  const hex = createHash("sha256").update(`${server}\u0000${tool}`).digest("hex").slice(0, SUFFIX_HEX + extraHex);
  return `${candidate.slice(0, MAX_TOOL_NAME - hex.length - 1)}_${hex}`;
}

export interface NamedTool {
  readonly server: string;
  readonly tool: string;
  readonly candidate: string;
}

/**
 * Assigns final names. Names already given keep them (Pi cannot rename a
 * registered tool). Among new tools, every member of a group whose candidates
 * collide, with each other or with a name in use, gets a hash suffix, so the
 * result does not depend on the order tools arrive in.
 */
export function assignToolNames(
  tools: readonly NamedTool[],
  existing: ReadonlyMap<string, string>,
  key: (server: string, tool: string) => string,
): Map<string, string> {
  const assigned = new Map<string, string>();
  const taken = new Set(existing.values());
  const fresh: NamedTool[] = [];
  for (const tool of tools) {
    const known = existing.get(key(tool.server, tool.tool));
    if (known) assigned.set(key(tool.server, tool.tool), known);
    else fresh.push(tool);
  }
  const counts = new Map<string, number>();
  for (const tool of fresh) counts.set(tool.candidate, (counts.get(tool.candidate) ?? 0) + 1);
  for (const tool of fresh) {
    const collides = (counts.get(tool.candidate) ?? 0) > 1 || taken.has(tool.candidate);
    let name = tool.candidate;
    for (let extra = 0; collides && (extra === 0 || taken.has(name)); extra++) {
      name = withHashSuffix(tool.candidate, tool.server, tool.tool, extra);
    }
    taken.add(name);
    assigned.set(key(tool.server, tool.tool), name);
  }
  return assigned;
}
