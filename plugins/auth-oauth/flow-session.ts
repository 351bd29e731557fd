/**
 * The OAuth session of the explicit flow behind `auth <server>` (flow.ts),
 * for both legs:
 * - the first (no `pending`): fresh discovery, registration when needed (the
 *   SDK registers when no client is known: CIMD or DCR), and an authorization
 *   URL with state and PKCE, kept for the flow instead of followed;
 * - the second (`pending`, the flow the first leg stored): exchanges the code
 *   with the flow's PKCE verifier, discovery and redirect URI, which binds
 *   the code to the authorization server the flow started with.
 * An explicit flow always authorizes anew: it offers the SDK no stored tokens.
 */
import type {
  OAuthClientInformationContext,
  OAuthDiscoveryState,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from "@modelcontextprotocol/client";
import { asStoredDiscovery, OAuthSession, type SessionOptions } from "./provider.ts";
import type { PendingFlow, StoredDiscovery, StoredEntry } from "./store.ts";

export interface FlowSessionOptions extends SessionOptions {
  /** The flow being completed (the second leg). */
  readonly pending?: PendingFlow;
}

export class FlowSession extends OAuthSession {
  private readonly pending: PendingFlow | undefined;
  /** The authorization URL the SDK built (the first leg). */
  authorizationUrl: URL | undefined;

  constructor(options: FlowSessionOptions) {
    super(options);
    this.pending = options.pending;
    if (options.pending) this.discovery = options.pending.discovery as unknown as OAuthDiscoveryState;
  }

  override get redirectUrl(): string {
    return this.pending?.redirectUri ?? super.redirectUrl;
  }

  get flowVerifier(): string | undefined {
    return this.verifier;
  }

  get flowDiscovery(): StoredDiscovery | undefined {
    return this.discovery && asStoredDiscovery(this.discovery);
  }

  async tokens(_ctx?: OAuthClientInformationContext): Promise<StoredOAuthTokens | undefined> {
    return undefined;
  }

  /** The client known now (the store read again); none lets the SDK register one. */
  clientInformation(ctx?: OAuthClientInformationContext): Promise<StoredOAuthClientInformation | undefined> {
    return this.knownClient(ctx, true);
  }

  /** Tokens obtained by an explicit flow end it: the pending flow and the scope hint go, the authorization is dated. */
  protected override tokensSaved(entry: StoredEntry): void {
    delete entry.pending;
    delete entry.scopeHint;
    entry.authorizedAt = Date.now();
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    this.authorizationUrl = authorizationUrl;
  }

  override codeVerifier(): string {
    return this.pending?.codeVerifier ?? super.codeVerifier();
  }

  /** A new flow discovers afresh; the second leg uses what the flow started with. */
  async discoveryState(): Promise<OAuthDiscoveryState | undefined> {
    return this.discovery;
  }

  protected override moreSecrets(): readonly (string | undefined)[] {
    return [this.pending?.codeVerifier, this.pending?.state];
  }
}
