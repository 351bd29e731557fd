import { isRecord } from "../config/schema.ts";
import { DefinitionBuilder, fieldPath, mapCommon, scopesOf, type HostProfile } from "./mapping.ts";
import type { Mapped } from "./types.ts";
import { convertTemplate, type VariableDialect } from "./values.ts";

/*
 * Cursor's `mcp.json` (`~/.cursor/mcp.json`, a project's `.cursor/mcp.json`;
 * `mcpServers`). Cursor fills in `${env:NAME}` from the environment and
 * `${userHome}`, `${workspaceFolder}`, `${workspaceFolderBasename}` and
 * `${pathSeparator}` (or `${/}`) itself. A static OAuth client is `auth`
 * with CLIENT_ID, CLIENT_SECRET and scopes.
 */

const VARIABLES: VariableDialect = {
  host: "Cursor",
  envPrefix: true,
  hostVariables: new Set(["userHome", "workspaceFolder", "workspaceFolderBasename", "pathSeparator"]),
  defaults: false,
};

export const CURSOR: HostProfile = {
  host: "Cursor",
  variables: VARIABLES,
  types: { stdio: "stdio", http: "http", "streamable-http": "http", sse: "sse" },
  field(key, value, builder, { kind }) {
    switch (key) {
      case "envFile":
        builder.fail("envFile", "loads variables from a file; pi-mcp cannot read env files (list them under env)");
        return true;
      case "auth":
        if (kind === "stdio") builder.fail("auth", "not meaningful on a stdio server");
        else mapAuth(value, builder);
        return true;
      default:
        return false;
    }
  },
};

export function mapCursor(name: string, raw: unknown): Mapped {
  return mapCommon(name, raw, CURSOR);
}

function mapAuth(value: unknown, builder: DefinitionBuilder): void {
  if (!isRecord(value)) {
    builder.fail("auth", "must be an object");
    return;
  }
  const convert = (text: string) => convertTemplate(text, VARIABLES);
  const auth: Record<string, unknown> = { type: "oauth" };
  for (const [key, item] of Object.entries(value)) {
    const path = fieldPath("auth", key);
    switch (key) {
      case "CLIENT_ID": {
        const clientId = builder.string(path, item, convert);
        if (clientId !== undefined) auth.clientId = clientId;
        break;
      }
      case "CLIENT_SECRET": {
        const secret = builder.string(path, item, convert);
        if (secret !== undefined) auth.clientSecret = secret;
        break;
      }
      case "scopes": {
        const scopes = scopesOf(path, item, builder, convert);
        if (scopes !== undefined && scopes.length > 0) auth.scopes = scopes;
        break;
      }
      default:
        builder.fail(path, "a field pi-mcp does not know from Cursor; it cannot tell what it changes");
    }
  }
  if (auth.clientId !== undefined) {
    builder.note("auth", "Cursor signs in with its own redirect URI; the registered client must also accept pi-mcp's (http://127.0.0.1:19876/mcp/oauth/callback unless auth.redirectUri says otherwise)");
  }
  if (Object.keys(auth).length > 1) builder.definition.auth = auth;
}
