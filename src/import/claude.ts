import {
  type DefinitionBuilder,
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
import { convertLiteral, type VariableDialect } from "./values.ts";

/*
 * Claude Code's project `.mcp.json` (`mcpServers`). Claude Code expands
 * `${NAME}` and `${NAME:-default}` in command, args, env, url and headers, and
 * fills in `${CLAUDE_PLUGIN_ROOT}` / `${CLAUDE_PROJECT_DIR}` itself. Its OAuth
 * client secret lives in the system keychain, never in the file.
 */

const VARIABLES: VariableDialect = {
  host: "Claude Code",
  envPrefix: false,
  hostVariables: new Set(["CLAUDE_PLUGIN_ROOT", "CLAUDE_PROJECT_DIR"]),
  defaults: true,
};

const literal = (text: string) => convertLiteral(text, "Claude Code");

export const CLAUDE: HostProfile = {
  host: "Claude Code",
  variables: VARIABLES,
  types: { stdio: "stdio", http: "http", sse: "sse" },
  remote: { oauth: (value, builder) => mapOAuth(value, builder) },
  refused: {
    headersHelper: "runs a command to produce headers; pi-mcp cannot run commands for values",
    timeout: "Claude Code's documentation does not define a per-server timeout; set connectTimeoutMs or requestTimeoutMs yourself",
  },
};

export function mapClaude(name: string, raw: unknown): Mapped {
  return mapCommon(name, raw, CLAUDE);
}

/** Claude Code's fixed-port callback is `http://localhost:<port>/callback`. */
const claudeCallbackPort: OAuthField = (path, value, auth, builder) => {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > 65535) builder.fail(path, "must be a port number");
  else auth.redirectUri = `http://localhost:${value}/callback`;
};

const CLAUDE_OAUTH: Readonly<Record<string, OAuthField>> = {
  clientId: oauthString("clientId", literal),
  callbackPort: claudeCallbackPort,
  scopes: oauthScopes(literal),
  authServerMetadataUrl: oauthUnsupported("replaces authorization-server discovery; pi-mcp has no such setting"),
};

function mapOAuth(value: unknown, builder: DefinitionBuilder): void {
  const auth = mapOAuthObject(
    "oauth",
    value,
    builder,
    CLAUDE_OAUTH,
    oauthUnsupported("a field pi-mcp does not know from Claude Code; it cannot tell what it changes"),
  );
  if (!auth) return;
  if (auth.clientId !== undefined) {
    builder.note(
      "oauth",
      "Claude Code keeps a client secret in the system keychain, not in the file: if this client has one, add auth.clientSecret",
    );
    if (auth.redirectUri === undefined) builder.note("oauth", `the registered client must accept ${REDIRECT_NOTE}`);
  }
  keepOAuth(auth, builder);
}
