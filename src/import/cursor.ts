import {
  type DefinitionBuilder,
  ENV_FILE_REFUSAL,
  REDIRECT_NOTE,
  keepOAuth,
  mapCommon,
  mapOAuthObject,
  oauthScopes,
  oauthString,
  oauthUnsupported,
  type HostProfile,
  type OAuthField,
} from "./mapping.ts";
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
  refused: { envFile: ENV_FILE_REFUSAL },
  remote: { auth: (value, builder) => mapAuth(value, builder) },
};

export function mapCursor(name: string, raw: unknown): Mapped {
  return mapCommon(name, raw, CURSOR);
}

const convert = (text: string) => convertTemplate(text, VARIABLES);

const CURSOR_AUTH: Readonly<Record<string, OAuthField>> = {
  CLIENT_ID: oauthString("clientId", convert),
  CLIENT_SECRET: oauthString("clientSecret", convert),
  scopes: oauthScopes(convert),
};

function mapAuth(value: unknown, builder: DefinitionBuilder): void {
  const auth = mapOAuthObject(
    "auth",
    value,
    builder,
    CURSOR_AUTH,
    oauthUnsupported("a field pi-mcp does not know from Cursor; it cannot tell what it changes"),
  );
  if (!auth) return;
  if (auth.clientId !== undefined)
    builder.note("auth", `Cursor signs in with its own redirect URI; the registered client must also accept ${REDIRECT_NOTE}`);
  keepOAuth(auth, builder);
}
