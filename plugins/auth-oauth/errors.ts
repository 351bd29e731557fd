/**
 * Errors of the OAuth machinery. Each carries `authState`, the connection state
 * it puts a server in; the runtime reads that marker (through `cause` chains and
 * the SDK's transport seams, which keep the error object) without importing
 * this module. No message ever contains a token, secret, code, verifier or
 * callback URL.
 */
export type AuthState = "needs_auth" | "needs_client_registration";

/** The command a person runs to authorize, for both surfaces. */
export function authCommandHint(server: string): string {
  return `run /mcp auth ${server} (or pi-mcp auth ${server})`;
}

/** The server needs an explicit, interactive authorization (`auth <server>`). */
export class AuthorizationRequiredError extends Error {
  readonly authState: AuthState = "needs_auth";
  constructor(
    readonly server: string,
    reason: string,
  ) {
    super(`MCP server "${server}" needs authorization (${reason}): ${authCommandHint(server)}`);
    this.name = "AuthorizationRequiredError";
  }
}

/** No client identity can be obtained automatically: the settings need a pre-registered client. */
export class ClientRegistrationRequiredError extends Error {
  readonly authState: AuthState = "needs_client_registration";
  constructor(
    readonly server: string,
    reason: string,
  ) {
    super(
      `MCP server "${server}" needs a registered OAuth client (${reason}): register pi-mcp with the authorization server ` +
        `(redirect URI as configured, default http://127.0.0.1:19876/mcp/oauth/callback) and set auth.clientId (and auth.clientSecret) in its settings`,
    );
    this.name = "ClientRegistrationRequiredError";
  }
}

/** `mcp-auth.json` cannot be used; it is never overwritten by ordinary operations. */
export class CredentialStoreError extends Error {
  readonly authState: AuthState = "needs_auth";
  constructor(message: string) {
    super(message);
    this.name = "CredentialStoreError";
  }
}

/** A problem with an authorization flow or a command's input (a usage-level failure). */
export class AuthFlowError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AuthFlowError";
  }
}
