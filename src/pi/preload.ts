/**
 * What the Pi entry registers while Pi loads the extension: the tools of
 * every server whose catalog is known, in Pi's extension factory, where
 * registration is linear (after the session binds, each registerTool rebuilds
 * Pi's whole registry). Known is what a replaced session of this Pi process
 * handed over (the connection pool, on `globalThis`), else what a session
 * with the same settings stamp recorded (the persisted catalogs). Only cheap
 * work: raw files and hashes, no settings validation, no MCP SDK, no plugin.
 *
 * These tools are offered before anything was checked against the live
 * servers; the host checks each server's catalog identity when it starts and
 * withdraws what no longer belongs (src/runtime/host.ts), and a call is only
 * ever sent to the server the tool was recorded for.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { agentDir, projectSettingsPath } from "../config/paths.ts";
import { settingsDigest } from "../config/settings-stamp.ts";
import { savedProjectTrust } from "../config/trust.ts";
import { cacheEnabled, readCachedStart, type CachedStart } from "../runtime/catalog-cache.ts";
import { processHandover } from "../runtime/pool.ts";
import { existsSync } from "node:fs";
import { effectiveExposure, piToolDefinition, supportsExposure, type ServerToolCall } from "./tools.ts";
import { offeredToolsOf, type OfferedTools } from "./tool-order.ts";

/**
 * The trust decisions a session in `cwd` may have, most likely first. A saved
 * decision is the decision. With none saved, a project with settings of its
 * own is taken as untrusted (its servers are never offered before Pi decided);
 * one without has nothing that needs trust, and either record may fit.
 */
function trustCandidates(agent: string, cwd: string): boolean[] {
  const saved = savedProjectTrust(agent, cwd);
  if (saved !== null) return [saved];
  return existsSync(projectSettingsPath(cwd)) ? [false] : [true, false];
}

/** The catalogs known for a session about to start in `cwd` (Pi's working folder while it loads the extension), if any. */
export function knownCatalogs(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): CachedStart | undefined {
  if (!cacheEnabled(env)) return undefined;
  const agent = agentDir(env);
  const handover = processHandover();
  if (handover && handover.digest === settingsDigest({ agentDir: agent, cwd: handover.cwd, trusted: handover.trusted, env }))
    return handover.start;
  const digests = trustCandidates(agent, cwd).map((trusted) => settingsDigest({ agentDir: agent, cwd, trusted, env }));
  return readCachedStart(agent, digests);
}

/** The known tools as the host offers them (src/pi/tool-order.ts), in the recorded order. */
export function knownOffered(known: CachedStart, supported: boolean = supportsExposure()): OfferedTools {
  return offeredToolsOf(
    known.servers.flatMap((server) => server.tools.map((tool) => [tool.piName, effectiveExposure(tool.exposure, supported)] as const)),
  );
}

/** Registers every known tool with Pi (the same definitions the host registers); `call` runs a call through the host. */
export function registerKnownTools(pi: ExtensionAPI, known: CachedStart, call: (piName: string) => ServerToolCall): void {
  const supported = supportsExposure();
  for (const server of known.servers) {
    for (const tool of server.tools) {
      const exposure = effectiveExposure(tool.exposure, supported);
      if (exposure === "skip") continue;
      pi.registerTool(
        piToolDefinition(
          pi,
          { name: tool.piName, server: server.name, tool: tool.tool, exposure: tool.exposure },
          exposure,
          call(tool.piName),
        ),
      );
    }
  }
}
