import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ancestors, canonicalPath } from "./paths.ts";
import { parseJson, isRecord } from "../safety/keys.ts";

/**
 * The project trust decision Pi saved in `<agentDir>/trust.json`: the nearest
 * folder (the project or an ancestor) with `true` or `false` decides; `null`
 * when nothing is saved. This is the *saved* decision that `-l` mutations
 * require, not Pi's effective trust for folders that need none.
 */
export function savedProjectTrust(agent: string, cwd: string): boolean | null {
  let data: unknown;
  try {
    data = parseJson(readFileSync(join(agent, "trust.json"), "utf8").replace(/^\uFEFF/, ""));
  } catch {
    return null;
  }
  if (!isRecord(data)) return null;
  for (const folder of ancestors(canonicalPath(cwd))) {
    const decision = data[folder];
    if (decision === true || decision === false) return decision;
  }
  return null;
}
