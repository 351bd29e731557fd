import { createHash } from "node:crypto";
import { canonicalPath } from "../config/paths.ts";
import { withoutRootFolders } from "../config/roots.ts";
import { INHERITED_VARIABLES, PI_MCP_VERSION } from "../config/settings-stamp.ts";
import type { PluginKernel } from "../kernel/hooks.ts";
import type { EffectiveConfig, ServerEntry } from "../kernel/settings.ts";
import type { ConnectionContext, HostContext } from "../kernel/types.ts";
import type { ServerConnection } from "./connection.ts";
import { authIdentityOf } from "./credentials.ts";
import { RetainedLog } from "./retained-log.ts";
import { poolKey } from "./pool.ts";

/**
 * What a server's definition is, compared: whether a live connection stays
 * open when settings change (connection), whether a pooled one may serve
 * another session (poolKey, retainKey) and whether a recorded catalog is still
 * the server's (catalog). Each holds resolved values: in memory only.
 */
export class ServerIdentities {
  constructor(
    private readonly kernel: PluginKernel,
    /** The host's context now (its config is the host's current settings). */
    private readonly host: () => HostContext,
  ) {}

  /**
   * What a live connection must keep to stay open when settings change: the
   * resolved definition apart from its root folders (a change of those is
   * announced to the server instead), its state, and the capabilities the
   * client would declare. How the definition is spelled in its file (`written`,
   * which holds the root folders too) and which file holds it are not part of
   * what the server is connected with.
   */
  connection(entry: ServerEntry): string {
    const { name, enabled, masked, transport, auth } = entry;
    const definition = entry.definition && withoutRootFolders(entry.definition);
    return JSON.stringify({
      name,
      enabled,
      masked,
      transport,
      auth,
      definition,
      capabilities: this.kernel.hooks.clientCapabilities.call({}, this.probeContext(entry)),
    });
  }

  /** The pool key a connection of `entry` waits under (see poolKey); undefined for a server that is not enabled or has no definition. */
  poolKey(entry: ServerEntry, config: EffectiveConfig = this.host().config): string | undefined {
    const parts = this.reuseParts(entry, config);
    return parts && poolKey(parts);
  }

  /**
   * The pool key under which `connection` may wait for the next session, or
   * undefined when it must close instead: its definition is no longer the one
   * in `settings` (re-read at handoff: changed, disabled, removed, or the
   * settings became invalid), or the stored credentials are no longer the
   * ones it was built with (a logout or a new `auth`, maybe in another terminal).
   */
  retainKey(connection: ServerConnection, settings: EffectiveConfig): string | undefined {
    if (!connection.reusable || !settings.valid) return undefined;
    const entry = settings.servers.find((candidate) => candidate.name === connection.name && !candidate.masked);
    if (!entry || this.connection(entry) !== this.connection(connection.entry)) return undefined;
    if (!connection.stillAuthorizedAsBuilt()) return undefined;
    return this.poolKey(entry, settings);
  }

  /**
   * The identity of the catalog a connection of `entry` would get: what
   * decides reuse (reuseParts), the variables a local server inherits from Pi
   * (they decide which program its command is) and pi-mcp's version (its
   * catalog checks and capabilities). When a server runs (`lifecycle`,
   * `idleTimeoutMs`) changes nothing it offers. In memory only: it holds
   * resolved values; persisted catalogs are named by its keyed hash.
   */
  catalog(entry: ServerEntry, config: EffectiveConfig = this.host().config): string | undefined {
    const parts = this.reuseParts(entry, config);
    if (!parts || !entry.definition) return undefined;
    const { lifecycle: _lifecycle, idleTimeoutMs: _idle, ...definition } = parts.definition as ServerEntry["definition"] & object;
    const inherited = entry.definition.transport === "stdio" ? INHERITED_VARIABLES.map((name) => [name, process.env[name] ?? null]) : [];
    return createHash("sha256")
      .update(JSON.stringify({ ...parts, definition, inherited, version: PI_MCP_VERSION }))
      .digest("hex");
  }

  /**
   * What decides whether a connection may be reused (see poolKey): the
   * canonical project root, trust, the resolved definition without its root
   * folders, the authentication identity, the timeouts and the capabilities.
   */
  private reuseParts(entry: ServerEntry, config: EffectiveConfig): Parameters<typeof poolKey>[0] | undefined {
    if (!entry.enabled || !entry.definition) return undefined;
    const probe = this.probeContext(entry);
    return {
      projectRoot: canonicalPath(this.host().cwd),
      trusted: config.sources.projectTrusted,
      // Other root folders are announced to a reused connection, not a reason for a new one.
      definition: withoutRootFolders(entry.definition),
      // The auth settings, refined by the auth plugins (stored OAuth credentials: logged out or authorized anew).
      authIdentity: authIdentityOf(this.kernel, probe),
      connectTimeoutMs: entry.definition.connectTimeoutMs ?? config.connectTimeoutMs,
      requestTimeoutMs: entry.definition.requestTimeoutMs ?? config.requestTimeoutMs,
      requestDeadlineMs: entry.definition.requestDeadlineMs ?? config.requestDeadlineMs,
      capabilities: this.kernel.hooks.clientCapabilities.call({}, probe),
    };
  }

  /** A connection context for asking hooks about a definition that is not connected. */
  private probeContext(entry: ServerEntry): ConnectionContext {
    return { host: this.host(), server: entry, log: () => {}, retainedLog: new RetainedLog(0) };
  }
}
