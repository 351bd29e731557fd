import { isRecord } from "../config/schema.ts";
import { DefinitionBuilder, fieldPath, mapCommon, scopesOf, type HostProfile } from "./mapping.ts";
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
  field(key, value, builder, { kind }) {
    switch (key) {
      case "oauth":
        if (kind === "stdio") builder.fail("oauth", "not meaningful on a stdio server");
        else mapOAuth(value, builder);
        return true;
      case "headersHelper":
        builder.fail("headersHelper", "runs a command to produce headers; pi-mcp cannot run commands for values");
        return true;
      case "timeout":
        builder.fail("timeout", "Claude Code's documentation does not define a per-server timeout; set connectTimeoutMs or requestTimeoutMs yourself");
        return true;
      default:
        return false;
    }
  },
};

export function mapClaude(name: string, raw: unknown): Mapped {
  return mapCommon(name, raw, CLAUDE);
}

function mapOAuth(value: unknown, builder: DefinitionBuilder): void {
  if (!isRecord(value)) {
    builder.fail("oauth", "must be an object");
    return;
  }
  const auth: Record<string, unknown> = { type: "oauth" };
  for (const [key, item] of Object.entries(value)) {
    const path = fieldPath("oauth", key);
    switch (key) {
      case "clientId": {
        const clientId = builder.string(path, item, literal);
        if (clientId !== undefined) auth.clientId = clientId;
        break;
      }
      case "callbackPort":
        if (typeof item !== "number" || !Number.isInteger(item) || item < 1 || item > 65535) builder.fail(path, "must be a port number");
        else auth.redirectUri = `http://localhost:${item}/callback`;
        break;
      case "scopes": {
        const scopes = scopesOf(path, item, builder, literal);
        if (scopes !== undefined && scopes.length > 0) auth.scopes = scopes;
        break;
      }
      case "authServerMetadataUrl":
        builder.fail(path, "replaces authorization-server discovery; pi-mcp has no such setting");
        break;
      default:
        builder.fail(path, "a field pi-mcp does not know from Claude Code; it cannot tell what it changes");
    }
  }
  if (auth.clientId !== undefined) {
    builder.note("oauth", "Claude Code keeps a client secret in the system keychain, not in the file: if this client has one, add auth.clientSecret");
    if (auth.redirectUri === undefined) {
      builder.note("oauth", "the registered client must accept pi-mcp's redirect URI (http://127.0.0.1:19876/mcp/oauth/callback unless auth.redirectUri says otherwise)");
    }
  }
  if (Object.keys(auth).length > 1) builder.definition.auth = auth;
}
