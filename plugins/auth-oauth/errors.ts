/**
 * Errors of the OAuth machinery, coded pi-mcp errors (src/kernel/errors.ts):
 * the code says the connection state it puts a server in (`needs_auth`,
 * `needs_client_registration`; `credential_store` puts it in `needs_auth`),
 * and the runtime reads the code (through `cause` chains and the SDK's
 * transport seams, which keep the error object) without importing this
 * module. No message ever contains a token, secret, code, verifier or
 * callback URL.
 */
import { brandError, PiMcpError } from "../../src/kernel/errors.ts";

/** The command a person runs to authorize, for both surfaces. */
export function authCommandHint(server: string): string {
  return `run /mcp auth ${server} (or pi-mcp auth ${server})`;
}

/** The server needs an explicit, interactive authorization (`auth <server>`). */
export class AuthorizationRequiredError extends PiMcpError {
  static {
    brandError(AuthorizationRequiredError, "AuthorizationRequiredError");
  }
  constructor(
    readonly server: string,
    reason: string,
  ) {
    super("needs_auth", `MCP server "${server}" needs authorization (${reason}): ${authCommandHint(server)}`);
    this.name = "AuthorizationRequiredError";
  }
}

/** No client identity can be obtained automatically: the settings need a pre-registered client. */
export class ClientRegistrationRequiredError extends PiMcpError {
  static {
    brandError(ClientRegistrationRequiredError, "ClientRegistrationRequiredError");
  }
  constructor(
    readonly server: string,
    reason: string,
  ) {
    super(
      "needs_client_registration",
      `MCP server "${server}" needs a registered OAuth client (${reason}): register pi-mcp with the authorization server ` +
        `(redirect URI as configured, default http://127.0.0.1:19876/mcp/oauth/callback) and set auth.clientId (and auth.clientSecret) in its settings`,
    );
    this.name = "ClientRegistrationRequiredError";
  }
}

/** `mcp-auth.json` cannot be used; it is never overwritten by ordinary operations. */
export class CredentialStoreError extends PiMcpError {
  static {
    brandError(CredentialStoreError, "CredentialStoreError");
  }
  constructor(message: string) {
    super("credential_store", message);
    this.name = "CredentialStoreError";
  }
}

/** A problem with an authorization flow or a command's input. */
export class AuthFlowError extends PiMcpError {
  static {
    brandError(AuthFlowError, "AuthFlowError");
  }
  constructor(message: string) {
    super("auth_failed", message);
    this.name = "AuthFlowError";
  }
}
