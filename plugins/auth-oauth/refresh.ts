/**
 * Stored access tokens: when one is due, and its refresh before a known
 * expiry. A refresh runs under the store's lock after re-reading the store,
 * so a refresh token rotated by another process is never lost: a process that
 * finds a fresh token stored by another uses it instead of refreshing.
 */
import {
  OAuthError,
  OAuthErrorCode,
  refreshAuthorization,
  type AuthorizationServerMetadata,
  type FetchLike,
  type OAuthClientInformationMixed,
  type OAuthTokens,
} from "@modelcontextprotocol/client";
import type { CredentialEntry } from "./credential-entry.ts";
import { AuthorizationRequiredError } from "./errors.ts";
import type { StoredTokens } from "./store.ts";

/** Whether a stored access token is about to expire (within 30 s, or the last quarter of its lifetime when shorter). */
export function expiring(stored: StoredTokens, now = Date.now()): boolean {
  if (stored.expiresAt === undefined) return false;
  const lifetime = Math.max(0, stored.expiresAt - stored.obtainedAt);
  return now >= stored.expiresAt - Math.min(30_000, lifetime / 4);
}

/** Tokens as stored: when they were obtained and, when the authorization server said, when they expire. */
export function storedTokens(tokens: OAuthTokens & { issuer?: string }): StoredTokens {
  const now = Date.now();
  return { tokens, obtainedAt: now, ...(typeof tokens.expires_in === "number" && { expiresAt: now + tokens.expires_in * 1000 }) };
}

export interface RefreshOptions {
  readonly server: string;
  /** The client the tokens were issued to (undefined: none is known, nothing is refreshed). */
  readonly clientInformation: (issuer: string) => Promise<OAuthClientInformationMixed | undefined>;
  readonly fetch: FetchLike;
  readonly log?: (text: string) => void;
}

/**
 * Refreshes the stored access token of `credentials` when it is about to
 * expire, under the store's lock, after re-reading the store. Answers the
 * token to send: another process's fresh one, the refreshed one, or the
 * current one when it cannot be refreshed now (no refresh token, or the
 * refresh failed for a reason that may pass). A refresh token the
 * authorization server no longer accepts is dropped: the server then needs
 * authorization.
 */
export function refreshDueTokens(credentials: CredentialEntry, options: RefreshOptions): Promise<OAuthTokens | undefined> {
  return credentials.locked(async (entry, save) => {
    const stored = entry?.tokens;
    if (!entry || !stored) return undefined;
    // Another process refreshed already: use its token.
    if (!expiring(stored)) return stored.tokens;
    const client = await options.clientInformation(stored.tokens.issuer ?? "").catch(() => undefined);
    if (!stored.tokens.refresh_token || !entry.discovery || !client) return stored.tokens;
    try {
      const fresh = await refreshAuthorization(entry.discovery.authorizationServerUrl, {
        metadata: entry.discovery.authorizationServerMetadata as AuthorizationServerMetadata | undefined,
        clientInformation: client,
        refreshToken: stored.tokens.refresh_token,
        ...(entry.resource !== undefined && { resource: entry.resource }),
        fetchFn: options.fetch,
      });
      entry.tokens = storedTokens({ ...fresh, ...(stored.tokens.issuer !== undefined && { issuer: stored.tokens.issuer }) });
      await save();
      return entry.tokens.tokens;
    } catch (error) {
      if (
        error instanceof OAuthError &&
        [OAuthErrorCode.InvalidGrant, OAuthErrorCode.InvalidClient, OAuthErrorCode.UnauthorizedClient].includes(
          error.code as OAuthErrorCode,
        )
      ) {
        delete entry.tokens;
        await save();
        throw new AuthorizationRequiredError(options.server, "the authorization server no longer accepts the stored refresh token");
      }
      options.log?.(
        `[pi-mcp] refreshing the access token failed (${error instanceof OAuthError ? error.code : "request failed"}); sending the current one\n`,
      );
      return stored.tokens;
    }
  });
}
