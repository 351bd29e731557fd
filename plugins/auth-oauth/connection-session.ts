/**
 * The OAuth session of a live connection. It sends the stored access token
 * (read from the store for every request, so a logout elsewhere takes
 * effect), refreshes it before a known expiry (refresh.ts) and after a 401,
 * and never starts an interactive flow: where the SDK would redirect a
 * browser (or register a client) it throws AuthorizationRequiredError /
 * ClientRegistrationRequiredError, which put the server in needs_auth /
 * needs_client_registration until `auth <server>` is run.
 */
import type {
  AuthorizationServerMetadata,
  OAuthClientInformationContext,
  OAuthDiscoveryState,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from "@modelcontextprotocol/client";
import { AuthorizationRequiredError, ClientRegistrationRequiredError } from "./errors.ts";
import { describeLegacyDiscovery, probeLegacyDiscovery } from "./legacy.ts";
import { OAuthSession } from "./provider.ts";
import { expiring, refreshDueTokens } from "./refresh.ts";

export class ConnectionSession extends OAuthSession {
  async tokens(ctx?: OAuthClientInformationContext): Promise<StoredOAuthTokens | undefined> {
    if (ctx) {
      // auth() is about to refresh (or start over): hold the lock until it saved or gave up.
      await this.credentials.hold();
      try {
        return (await this.credentials.read(true))?.tokens?.tokens as StoredOAuthTokens | undefined;
      } catch (error) {
        await this.credentials.release();
        throw error;
      }
    }
    // Read anew for every request: after a logout or a new `auth` (another terminal too), a live
    // connection sends what is stored now, never the tokens it read when it connected.
    const stored = (await this.credentials.read(true).catch(() => undefined))?.tokens;
    if (!stored) return undefined;
    if (!expiring(stored)) return stored.tokens as StoredOAuthTokens;
    const refreshed = await refreshDueTokens(this.credentials, {
      server: this.options.server,
      clientInformation: (issuer) => this.clientInformation({ issuer }),
      fetch: this.fetch,
      ...(this.options.log && { log: this.options.log }),
    });
    return refreshed as StoredOAuthTokens | undefined;
  }

  /** Registration is part of the explicit flow, never of a background connect: without a known client this connection needs `auth`. */
  async clientInformation(ctx?: OAuthClientInformationContext): Promise<StoredOAuthClientInformation | undefined> {
    const known = await this.knownClient(ctx, false);
    if (known) return known;
    const metadata = this.discovery?.authorizationServerMetadata as AuthorizationServerMetadata | undefined;
    const canUseDocument = this.clientMetadataUrl !== undefined && metadata?.client_id_metadata_document_supported === true;
    if (metadata && !metadata.registration_endpoint && !canUseDocument) {
      throw new ClientRegistrationRequiredError(
        this.options.server,
        "its authorization server supports neither dynamic client registration nor a client ID metadata document for this client",
      );
    }
    throw new AuthorizationRequiredError(this.options.server, "no stored authorization");
  }

  /** A running connection never starts a browser flow: it remembers what to ask for, then stops. */
  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    const scope = authorizationUrl.searchParams.get("scope") ?? undefined;
    try {
      if (scope) {
        await this.credentials
          .change((entry, replacing) => {
            // A hint is not worth another URL's or client's credentials (settings may change back).
            if (replacing || entry.scopeHint === scope) return false;
            entry.scopeHint = scope;
          })
          .catch(() => undefined);
      }
    } finally {
      await this.credentials.release();
    }
    const stored = this.credentials.current?.tokens;
    throw new AuthorizationRequiredError(
      this.options.server,
      stored ? "the stored authorization is not sufficient or no longer valid" : "no stored authorization",
    );
  }

  /**
   * A connection discovers afresh (a changed authorization server is noticed),
   * except for a 2025-03-26 server, whose authorization server is fixed by its
   * origin: what `auth` accepted is used as is.
   */
  async discoveryState(): Promise<OAuthDiscoveryState | undefined> {
    if (this.discovery) return this.discovery;
    const entry = await this.credentials.read().catch(() => undefined);
    if (entry?.discovery?.legacyIssuer) {
      this.discovery = entry.discovery as unknown as OAuthDiscoveryState;
      return this.discovery;
    }
    if (entry?.tokens) return undefined;
    // Nothing stored: this connection ends in needs_auth; a 2025-03-26 server must get there too.
    const legacy = await probeLegacyDiscovery(this.options.definition.url, this.fetch);
    if (legacy) this.options.log?.(`[pi-mcp] ${describeLegacyDiscovery(legacy, this.options.redact)}\n`);
    this.discovery = legacy as unknown as OAuthDiscoveryState | undefined;
    return this.discovery;
  }
}
