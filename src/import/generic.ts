import { mapCommon, type HostProfile } from "./mapping.ts";
import type { Mapped } from "./types.ts";
import type { VariableDialect } from "./values.ts";

/*
 * Any other file with an `mcpServers` object (Claude Desktop, Windsurf, Cline
 * and others share the shape). Only the fields those hosts agree on are
 * imported: command, args, env, cwd, url, headers, type, and enabled or
 * disabled. `${NAME}` stays, `${env:NAME}` becomes `${NAME}`.
 */

const VARIABLES: VariableDialect = { host: "this host", envPrefix: true, hostVariables: new Set(), defaults: true };

export const GENERIC: HostProfile = {
  host: "this file's host",
  variables: VARIABLES,
  types: { stdio: "stdio", http: "http", "streamable-http": "http", streamableHttp: "http", sse: "sse" },
  field(key, value, builder) {
    switch (key) {
      case "enabled":
        if (builder.boolean(key, value) === false) builder.definition.enabled = false;
        return true;
      case "disabled":
        if (builder.boolean(key, value) === true) builder.definition.enabled = false;
        return true;
      case "description":
        builder.note(key, "not imported: pi-mcp has no description setting");
        return true;
      case "autoApprove":
      case "alwaysAllow":
        builder.note(key, "not imported: pi-mcp keeps no approval list (another Pi extension may govern tool calls)");
        return true;
      case "timeout":
        builder.fail(key, "hosts disagree on its unit and meaning (seconds per request in Pi, for example); set connectTimeoutMs or requestTimeoutMs yourself");
        return true;
      default:
        return false;
    }
  },
};

export function mapGeneric(name: string, raw: unknown): Mapped {
  return mapCommon(name, raw, GENERIC);
}
