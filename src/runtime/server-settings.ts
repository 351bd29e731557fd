import type { EffectiveConfig } from "../kernel/settings.ts";
import type { ConnectionContext } from "../kernel/types.ts";

/** The settings a server definition may set for itself; where it does not, the top-level one applies. */
export type OwnSetting = "connectTimeoutMs" | "requestTimeoutMs" | "requestDeadlineMs" | "lifecycle" | "idleTimeoutMs";

/** A server's own `key` setting, else the top-level one. */
export function serverSetting<K extends OwnSetting>(context: Pick<ConnectionContext, "host" | "server">, key: K): EffectiveConfig[K] {
  const own: Partial<Pick<EffectiveConfig, OwnSetting>> | undefined = context.server.definition;
  return own?.[key] ?? context.host.config[key];
}
