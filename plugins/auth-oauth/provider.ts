/**
 * pi-mcp's OAuthClientProvider: the SDK's OAuth client machinery (`auth()`:
 * RFC 9728 and RFC 8414/OIDC discovery, Client ID Metadata Documents, Dynamic
 * Client Registration, PKCE S256, scope selection and step-up, issuer and
 * resource checks) persisted in the credential store.
 *
 * Three modes:
 * - `background`: a live connection. It sends the stored access token (read
 *   from the store for every request, so a logout elsewhere takes effect),
 *   refreshes it before a known expiry and after a 401, and never starts an
 *   interactive flow: where the SDK would redirect a browser (or register a
 *   client) it throws AuthorizationRequiredError / ClientRegistrationRequiredError,
 *   which put the server in needs_auth / needs_client_registration. Every
 *   refresh runs under the store's lock after re-reading the store, so a
 *   refresh token rotated by another process is never lost: a process that
 *   finds a fresh token stored by another uses it instead of refreshing.
 * - `interactive`: the first leg of `auth <server>`: fresh discovery,
 *   registration when needed, and an authorization URL (with state and PKCE).
 * - `callback`: the second leg: exchanges the code with the persisted PKCE
 *   verifier and discovery state of the pending flow.
 */
import { randomBytes } from "node:crypto";
import {
  OAuthError,
  OAuthErrorCode,
  isHttpsUrl,
  refreshAuthorization,
  type AuthorizationServerMetadata,
  type FetchLike,
  type OAuthClientInformationContext,
  type OAuthClientInformationMixed,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type OAuthTokens,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from "@modelcontextprotocol/client";
import type { RemoteDefinition } from "../../src/kernel/settings.ts";
import type { Redactor } from "../../src/kernel/types.ts";
import { DEFAULTS } from "../../src/kernel/settings.ts";
import { documentFetch } from "../../src/safety/bounded-fetch.ts";
import { AuthorizationRequiredError, ClientRegistrationRequiredError } from "./errors.ts";
import { describeLegacyDiscovery, probeLegacyDiscovery } from "./legacy.ts";
import { bindingMatches, definitionBinding, type Binding, type CredentialStore, type PendingFlow, type StoredDiscovery, type StoredEntry, type StoredTokens } from "./store.ts";

export type SessionMode = "background" | "interactive" | "callback";

/** The OAuth-relevant settings of a remote definition (any auth other than oauth counts as none). */
export interface OAuthSettings {
  readonly clientId?: string;
  readonly clientSecret?: string;
  readonly redirectUri: string;
  readonly scopes?: readonly string[];
}

export function oauthSettings(definition: RemoteDefinition): OAuthSettings {
  const auth = definition.auth?.type === "oauth" ? definition.auth : undefined;
  return {
    ...(auth?.clientId !== undefined && { clientId: auth.clientId }),
    ...(auth?.clientSecret !== undefined && { clientSecret: auth.clientSecret }),
    redirectUri: auth?.redirectUri ?? DEFAULTS.oauthRedirectUri,
    ...(auth?.scopes !== undefined && auth.scopes.length > 0 && { scopes: auth.scopes }),
  };
}

/** How long a refresh may hold the store's lock when the SDK leaves it without saving (a safety net). */
const HELD_LOCK_LIMIT_MS = 20_000;

export interface SessionOptions {
  readonly server: string;
  readonly definition: RemoteDefinition;
  readonly store: CredentialStore;
  readonly mode: SessionMode;
  /** The flow being completed (callback mode). */
  readonly pending?: PendingFlow;
  /** Appends to the server's retained log. */
  readonly log?: (text: string) => void;
  /** The settings' secrets, removed from what this session writes to the log before anything is cut. */
  readonly redact?: Redactor;
  /** How long one OAuth request (discovery, registration, token) may take, its answer read: the server's connect timeout. */
  readonly connectTimeoutMs: number;
}

/** The SDK's issuer comparison: equal, or differing only by one trailing slash. */
function issuersMatch(a: string, b: string): boolean {
  return a === b || (a.endsWith("/") && a.slice(0, -1) === b) || (b.endsWith("/") && b.slice(0, -1) === a);
}

function expiring(stored: StoredTokens, now = Date.now()): boolean {
  if (stored.expiresAt === undefined) return false;
  const lifetime = Math.max(0, stored.expiresAt - stored.obtainedAt);
  return now >= stored.expiresAt - Math.min(30_000, lifetime / 4);
}

export function storedTokens(tokens: OAuthTokens & { issuer?: string }): StoredTokens {
  const now = Date.now();
  return { tokens, obtainedAt: now, ...(typeof tokens.expires_in === "number" && { expiresAt: now + tokens.expires_in * 1000 }) };
}

function asStoredDiscovery(state: OAuthDiscoveryState): StoredDiscovery {
  return JSON.parse(JSON.stringify(state)) as StoredDiscovery;
}

export class OAuthSession implements OAuthClientProvider {
  readonly settings: OAuthSettings;
  readonly binding: Binding;
  private entryCache: StoredEntry | undefined;
  private entryLoaded = false;
  private held: { release: () => Promise<void>; timer: NodeJS.Timeout } | undefined;
  private verifier: string | undefined;
  private stateValue: string | undefined;
  private discovery: OAuthDiscoveryState | undefined;
  private resource: string | undefined;
  private flowClient: StoredOAuthClientInformation | undefined;
  /** The authorization URL the SDK built (interactive mode). */
  authorizationUrl: URL | undefined;
  /** Every OAuth request of this session: an answer of at most the message cap, within the connect timeout (an endless document costs neither memory nor time). */
  readonly fetch: FetchLike;

  constructor(private readonly options: SessionOptions) {
    this.settings = oauthSettings(options.definition);
    this.binding = definitionBinding(options.definition);
    this.fetch = documentFetch(options.connectTimeoutMs, "connectTimeoutMs");
    if (options.pending) this.discovery = options.pending.discovery as unknown as OAuthDiscoveryState;
  }

  get mode(): SessionMode {
    return this.options.mode;
  }

  get redirectUrl(): string {
    return this.options.pending?.redirectUri ?? this.settings.redirectUri;
  }

  /** A configured https client id is a Client ID Metadata Document URL. */
  get clientMetadataUrl(): string | undefined {
    return this.settings.clientId !== undefined && isHttpsUrl(this.settings.clientId) ? this.settings.clientId : undefined;
  }

  private get preRegistered(): boolean {
    return this.settings.clientId !== undefined && this.clientMetadataUrl === undefined;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "pi-mcp",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: this.settings.clientSecret !== undefined ? "client_secret_basic" : "none",
      ...(this.settings.scopes && { scope: this.settings.scopes.join(" ") }),
    };
  }

  state(): string {
    this.stateValue = randomBytes(32).toString("base64url");
    return this.stateValue;
  }

  /** The state the last authorization URL carries. */
  get flowState(): string | undefined {
    return this.stateValue;
  }

  get flowVerifier(): string | undefined {
    return this.verifier;
  }

  get flowDiscovery(): StoredDiscovery | undefined {
    return this.discovery && asStoredDiscovery(this.discovery);
  }

  /** The stored entry for this server and binding (read once, then kept; `fresh` re-reads). */
  private async entry(fresh = false): Promise<StoredEntry | undefined> {
    if (fresh || !this.entryLoaded) {
      this.entryCache = await this.options.store.entry(this.options.server, this.binding);
      this.entryLoaded = true;
    }
    return this.entryCache;
  }

  /**
   * Changes the stored entry: directly while this session holds the lock, otherwise under it.
   * `change` learns whether it would replace an entry bound to another URL or client.
   */
  private async changeEntry(change: (entry: StoredEntry, replacing: boolean) => boolean | void): Promise<void> {
    const { store, server } = this.options;
    if (this.held) {
      const file = await store.read();
      const current = file.servers[server];
      const matches = bindingMatches(current, this.binding);
      const entry: StoredEntry = matches ? current : { url: this.binding.url, client: this.binding.client };
      if (change(entry, !matches && current !== undefined) !== false) {
        file.servers[server] = entry;
        await store.write(file);
      }
      this.entryCache = entry;
      this.entryLoaded = true;
      return;
    }
    this.entryCache = await store.updateEntry(server, this.binding, change);
    this.entryLoaded = true;
  }

  private async hold(): Promise<void> {
    if (this.held) return;
    let release: () => void = () => undefined;
    const acquired = new Promise<void>((resolve) => (release = resolve));
    let entered: () => void = () => undefined;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    const done = this.options.store.withLock(async () => {
      entered();
      await acquired;
    });
    await Promise.race([inside, done]); // `done` rejects when the lock cannot be taken
    const timer = setTimeout(() => void this.releaseHeld(), HELD_LOCK_LIMIT_MS);
    timer.unref?.();
    this.held = {
      release: async () => {
        release();
        await done.catch(() => undefined);
      },
      timer,
    };
  }

  private async releaseHeld(): Promise<void> {
    const held = this.held;
    this.held = undefined;
    if (!held) return;
    clearTimeout(held.timer);
    await held.release();
  }

  async clientInformation(ctx?: OAuthClientInformationContext): Promise<StoredOAuthClientInformation | undefined> {
    if (this.preRegistered) {
      return {
        client_id: this.settings.clientId!,
        ...(this.settings.clientSecret !== undefined && { client_secret: this.settings.clientSecret }),
        ...(ctx?.issuer !== undefined && { issuer: ctx.issuer }),
      } as StoredOAuthClientInformation;
    }
    if (this.flowClient) return this.flowClient;
    const stored = (await this.entry(this.mode !== "background"))?.clientInformation;
    // A client registered with another authorization server is never used for this one (SEP-2352).
    const sameServer = !stored?.issuer || ctx?.issuer === undefined || issuersMatch(stored.issuer, ctx.issuer);
    if (stored && sameServer) return stored as StoredOAuthClientInformation;
    if (this.mode !== "background") return undefined; // the SDK registers (CIMD or DCR)
    // Registration is part of the explicit flow, never of a background connect.
    const metadata = this.discovery?.authorizationServerMetadata as AuthorizationServerMetadata | undefined;
    const canUseDocument = this.clientMetadataUrl !== undefined && metadata?.client_id_metadata_document_supported === true;
    if (metadata && !metadata.registration_endpoint && !canUseDocument) {
      throw new ClientRegistrationRequiredError(this.options.server, "its authorization server supports neither dynamic client registration nor a client ID metadata document for this client");
    }
    throw new AuthorizationRequiredError(this.options.server, "no stored authorization");
  }

  async saveClientInformation(information: StoredOAuthClientInformation): Promise<void> {
    this.flowClient = information;
    // A configured client's secret stays in the settings; only obtained identities are stored.
    if (this.preRegistered) return;
    await this.changeEntry((entry) => {
      // Tokens belong to the client they were issued to: a new client identity drops them.
      if (entry.clientInformation?.client_id !== information.client_id) delete entry.tokens;
      entry.clientInformation = information as OAuthClientInformationMixed;
    });
  }

  /** The minimal AuthProvider view (the transports use the OAuth view of this object; this keeps the type honest). */
  async token(): Promise<string | undefined> {
    return (await this.tokens())?.access_token;
  }

  async tokens(ctx?: OAuthClientInformationContext): Promise<StoredOAuthTokens | undefined> {
    if (this.mode !== "background") return undefined; // an explicit flow always authorizes anew
    if (ctx) {
      // auth() is about to refresh (or start over): hold the lock until it saved or gave up.
      await this.hold();
      try {
        return (await this.entry(true))?.tokens?.tokens as StoredOAuthTokens | undefined;
      } catch (error) {
        await this.releaseHeld();
        throw error;
      }
    }
    // Read anew for every request: after a logout or a new `auth` (another terminal too), a live
    // connection sends what is stored now, never the tokens it read when it connected.
    const stored = (await this.entry(true).catch(() => undefined))?.tokens;
    if (!stored) return undefined;
    if (!expiring(stored)) return stored.tokens as StoredOAuthTokens;
    return (await this.refreshBeforeExpiry()) as StoredOAuthTokens | undefined;
  }

  /** Refreshes an access token that is about to expire, under the lock, after re-reading the store. */
  private async refreshBeforeExpiry(): Promise<OAuthTokens | undefined> {
    const { store, server } = this.options;
    return store.withLock(async () => {
      const file = await store.read();
      const current = file.servers[server];
      const entry = bindingMatches(current, this.binding) ? current : undefined;
      this.entryCache = entry;
      const stored = entry?.tokens;
      if (!entry || !stored) return undefined;
      // Another process refreshed already: use its token.
      if (!expiring(stored)) return stored.tokens;
      const client = await this.clientInformation({ issuer: stored.tokens.issuer ?? "" }).catch(() => undefined);
      if (!stored.tokens.refresh_token || !entry.discovery || !client) return stored.tokens;
      try {
        const fresh = await refreshAuthorization(entry.discovery.authorizationServerUrl, {
          metadata: entry.discovery.authorizationServerMetadata as AuthorizationServerMetadata | undefined,
          clientInformation: client,
          refreshToken: stored.tokens.refresh_token,
          ...(entry.resource !== undefined && { resource: entry.resource }),
          fetchFn: this.fetch,
        });
        entry.tokens = storedTokens({ ...fresh, ...(stored.tokens.issuer !== undefined && { issuer: stored.tokens.issuer }) });
        await store.write(file);
        return entry.tokens.tokens;
      } catch (error) {
        if (error instanceof OAuthError && [OAuthErrorCode.InvalidGrant, OAuthErrorCode.InvalidClient, OAuthErrorCode.UnauthorizedClient].includes(error.code as OAuthErrorCode)) {
          delete entry.tokens;
          await store.write(file);
          throw new AuthorizationRequiredError(server, "the authorization server no longer accepts the stored refresh token");
        }
        this.options.log?.(`[pi-mcp] refreshing the access token failed (${error instanceof OAuthError ? error.code : "request failed"}); sending the current one\n`);
        return stored.tokens;
      }
    });
  }

  async saveTokens(tokens: StoredOAuthTokens): Promise<void> {
    try {
      await this.changeEntry((entry) => {
        entry.tokens = storedTokens(tokens);
        if (this.discovery) entry.discovery = asStoredDiscovery(this.discovery);
        if (this.resource !== undefined) entry.resource = this.resource;
        if (this.mode !== "background") {
          delete entry.pending;
          delete entry.scopeHint;
          entry.authorizedAt = Date.now();
        }
      });
    } finally {
      await this.releaseHeld();
    }
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    if (this.mode !== "background") {
      this.authorizationUrl = authorizationUrl;
      return;
    }
    // A running connection never starts a browser flow: remember what to ask for, then stop.
    const scope = authorizationUrl.searchParams.get("scope") ?? undefined;
    try {
      if (scope) {
        await this.changeEntry((entry, replacing) => {
          // A hint is not worth another URL's or client's credentials (settings may change back).
          if (replacing || entry.scopeHint === scope) return false;
          entry.scopeHint = scope;
        }).catch(() => undefined);
      }
    } finally {
      await this.releaseHeld();
    }
    const stored = this.entryCache?.tokens;
    throw new AuthorizationRequiredError(this.options.server, stored ? "the stored authorization is not sufficient or no longer valid" : "no stored authorization");
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.verifier = codeVerifier;
  }

  codeVerifier(): string {
    const verifier = this.options.pending?.codeVerifier ?? this.verifier;
    if (verifier === undefined) throw new AuthorizationRequiredError(this.options.server, "no authorization flow is pending");
    return verifier;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.discovery = state;
  }

  async discoveryState(): Promise<OAuthDiscoveryState | undefined> {
    // Background and new flows discover afresh (a changed authorization server is noticed); the callback leg
    // uses what the flow started with, which binds the code to that authorization server.
    if (this.discovery || this.mode !== "background") return this.discovery;
    // A 2025-03-26 server's authorization server is fixed by its origin: what `auth` accepted is used as is.
    const entry = await this.entry().catch(() => undefined);
    if (entry?.discovery?.legacyIssuer) return (this.discovery = entry.discovery as unknown as OAuthDiscoveryState);
    if (entry?.tokens) return undefined;
    // Nothing stored: this connection ends in needs_auth; a 2025-03-26 server must get there too.
    const legacy = await probeLegacyDiscovery(this.options.definition.url, this.fetch);
    if (legacy) this.options.log?.(`[pi-mcp] ${describeLegacyDiscovery(legacy, this.options.redact)}\n`);
    return (this.discovery = legacy as unknown as OAuthDiscoveryState | undefined);
  }

  saveResourceUrl(resource: string): void {
    this.resource = resource;
  }

  async invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): Promise<void> {
    if (scope === "verifier") return;
    if (scope === "discovery") {
      this.discovery = undefined;
      return;
    }
    if (scope === "client" || scope === "all") this.flowClient = undefined;
    try {
      await this.changeEntry((entry) => {
        if (scope === "client" || scope === "all") delete entry.clientInformation;
        delete entry.tokens;
      });
    } finally {
      await this.releaseHeld();
    }
  }

  /**
   * Every credential value this session has seen (tokens, client secrets, the
   * PKCE verifier, the state): what the SDK prints about this session, and any
   * error it causes, must never show them.
   */
  knownSecrets(): string[] {
    const entry = this.entryCache;
    const values = [
      entry?.tokens?.tokens.access_token,
      entry?.tokens?.tokens.refresh_token,
      entry?.tokens?.tokens.id_token,
      entry?.clientInformation?.client_secret,
      entry?.pending?.codeVerifier,
      entry?.pending?.state,
      this.flowClient?.client_secret,
      this.settings.clientSecret,
      this.verifier,
      this.stateValue,
      this.options.pending?.codeVerifier,
      this.options.pending?.state,
    ];
    return values.filter((value): value is string => typeof value === "string" && value !== "");
  }

  /** Releases anything this session still holds (a lock the SDK left taken after an error). */
  async dispose(): Promise<void> {
    await this.releaseHeld();
  }
}
