import { mapCommon, type HostProfile } from "./mapping.ts";
import type { Mapped } from "./types.ts";
import type { VariableDialect } from "./values.ts";

/*
 * Any other file with an `mcpServers` object (Claude Desktop, Windsurf, Cline
 * and others share the shape). Only the fields those hosts agree on are
 * imported: command, args, env, cwd, url, headers, type, and enabled or
 * disabled. `${NAME}` stays, `${env:NAME}` becomes `${NAME}`.
 */

const NO_APPROVAL_LIST = "not imported: pi-mcp keeps no approval list (another Pi extension may govern tool calls)";

const VARIABLES: VariableDialect = { host: "this host", envPrefix: true, hostVariables: new Set(), defaults: true };

export const GENERIC: HostProfile = {
  host: "this file's host",
  variables: VARIABLES,
  types: { stdio: "stdio", http: "http", "streamable-http": "http", streamableHttp: "http", sse: "sse" },
  noted: {
    description: "not imported: pi-mcp has no description setting",
    autoApprove: NO_APPROVAL_LIST,
    alwaysAllow: NO_APPROVAL_LIST,
  },
  refused: {
    timeout:
      "hosts disagree on its unit and meaning (seconds per request in Pi, for example); set connectTimeoutMs or requestTimeoutMs yourself",
  },
  field(key, value, builder) {
    // `enabled: false` and `disabled: true` both turn the server off.
    if (key !== "enabled" && key !== "disabled") return false;
    if (builder.boolean(key, value) === (key === "disabled")) builder.definition.enabled = false;
    return true;
  },
};

export function mapGeneric(name: string, raw: unknown): Mapped {
  return mapCommon(name, raw, GENERIC);
}
