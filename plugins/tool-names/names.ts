/*
 * The Pi name of a server tool: `mcp__<server>__<tool>`, made safe for model
 * providers, with a hash suffix where it could collide. A pure function of
 * the server's tool list and the configured server names, so the same tool
 * gets the same name whichever server connected first, in every session.
 */
import { createHash } from "node:crypto";

export const MAX_TOOL_NAME = 64;
const SUFFIX_HEX = 8;

/** Replaces every character providers reject and truncates to 64. */
export function toolNameCandidate(name: string): string {
  const safe = name.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, MAX_TOOL_NAME);
  return safe.length > 0 ? safe : "_";
}

/** A stable suffix for one (server, tool) pair (`extraHex` more digits when even that is taken). */
export function withHashSuffix(candidate: string, server: string, tool: string, extraHex = 0): string {
  const hex = createHash("sha256")
    .update(`${server}\u0000${tool}`)
    .digest("hex")
    .slice(0, SUFFIX_HEX + extraHex);
  return `${candidate.slice(0, MAX_TOOL_NAME - hex.length - 1)}_${hex}`;
}

/** What a name is decided from. */
export interface NamingInput {
  readonly server: string;
  readonly tool: string;
  /** Every tool name the server offers now (its catalog, this tool included). */
  readonly serverTools: readonly string[];
  /** Every configured server name (this one included). */
  readonly servers: readonly string[];
  /** Whether a name already belongs to another tool in this session (Pi cannot rename or remove a tool). */
  readonly taken?: (name: string) => boolean;
}

/**
 * The tool's Pi name. Its candidate `mcp__<server>__<tool>` (characters
 * providers reject become `_`, cut to 64) gets a hash of (server, tool) only
 * when it could collide: another tool of the same server has the same
 * candidate, or another configured server could produce it (its own
 * candidates start with that server's prefix, e.g. servers `a.b` and `a_b`,
 * or `a` and `a__b`). Both sides of a collision are suffixed, so which server
 * connected first never matters. A name already taken in this session gets
 * more hash digits.
 */
export function piToolName(input: NamingInput): string {
  const { server, tool } = input;
  const candidate = toolNameCandidate(`mcp__${server}__${tool}`);
  const sameCandidate = candidatesOf(server, input.serverTools).get(candidate);
  const collides =
    (sameCandidate !== undefined && [...sameCandidate].some((other) => other !== tool)) ||
    input.servers.some((other) => other !== server && candidate.startsWith(serverPrefix(other)));
  let name = collides ? withHashSuffix(candidate, server, tool) : candidate;
  for (let extra = collides ? 1 : 0; input.taken?.(name); extra++) name = withHashSuffix(candidate, server, tool, extra);
  return name;
}

/**
 * The tool names of a server's list by candidate, computed once per list (the
 * host names every tool of one list with the same array): naming a list stays
 * linear in its length, not quadratic.
 */
const candidateIndex = new WeakMap<readonly string[], Map<string, Map<string, Set<string>>>>();

function candidatesOf(server: string, serverTools: readonly string[]): Map<string, Set<string>> {
  let byServer = candidateIndex.get(serverTools);
  if (!byServer) {
    byServer = new Map();
    candidateIndex.set(serverTools, byServer);
  }
  let index = byServer.get(server);
  if (!index) {
    index = new Map();
    for (const name of serverTools) {
      const candidate = toolNameCandidate(`mcp__${server}__${name}`);
      const names = index.get(candidate);
      if (names) names.add(name);
      else index.set(candidate, new Set([name]));
    }
    byServer.set(server, index);
  }
  return index;
}

/** What every candidate of `server`'s tools starts with. */
function serverPrefix(server: string): string {
  return toolNameCandidate(`mcp__${server}__`);
}
