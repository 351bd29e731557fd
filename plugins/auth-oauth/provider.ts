/**
 * pi-mcp's OAuthClientProvider: the SDK's OAuth client machinery (`auth()`:
 * RFC 9728 and RFC 8414/OIDC discovery, Client ID Metadata Documents, Dynamic
 * Client Registration, PKCE S256, scope selection and step-up, issuer and
 * resource checks) persisted in the credential store.
 *
 * This is what every session shares; the two kinds differ in what they do
 * where the SDK would authorize:
 * - ConnectionSession (connection-session.ts): a live connection. It sends
 *   the stored tokens, refreshes them, and never starts an interactive flow.
 * - FlowSession (flow-session.ts): the explicit flow of `auth <server>`, its
 *   first leg (an authorization URL) and its second (the code exchange).
 */
import { randomBytes } from "node:crypto";
import {
  isHttpsUrl,
  type FetchLike,
  type OAuthClientInformationContext,
  type OAuthClientInformationMixed,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from "@modelcontextprotocol/client";
import type { RemoteDefinition } from "../../src/kernel/settings.ts";
import type { Redactor } from "../../src/kernel/types.ts";
import { documentFetch } from "../../src/safety/bounded-fetch.ts";
import { CredentialEntry } from "./credential-entry.ts";
import { AuthorizationRequiredError } from "./errors.ts";
import { storedTokens } from "./refresh.ts";
import { oauthSettings, type OAuthSettings } from "./settings.ts";
import { definitionBinding, type Binding, type CredentialStore, type StoredDiscovery, type StoredEntry } from "./store.ts";

export interface SessionOptions {
  readonly server: string;
  readonly definition: RemoteDefinition;
  readonly store: CredentialStore;
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

export function asStoredDiscovery(state: OAuthDiscoveryState): StoredDiscovery {
  return JSON.parse(JSON.stringify(state)) as StoredDiscovery;
}

export abstract class OAuthSession implements OAuthClientProvider {
  readonly settings: OAuthSettings;
  readonly binding: Binding;
  /** This server's entry in the credential store. */
  protected readonly credentials: CredentialEntry;
  protected verifier: string | undefined;
  private stateValue: string | undefined;
  protected discovery: OAuthDiscoveryState | undefined;
  private resource: string | undefined;
  /** A client registered (or given by a metadata document) during this session. */
  protected flowClient: StoredOAuthClientInformation | undefined;
  /** Every OAuth request of this session: an answer of at most the message cap, within the connect timeout (an endless document costs neither memory nor time). */
  readonly fetch: FetchLike;

  constructor(protected readonly options: SessionOptions) {
    this.settings = oauthSettings(options.definition);
    this.binding = definitionBinding(options.definition);
    this.credentials = new CredentialEntry(options.store, options.server, this.binding);
    this.fetch = documentFetch(options.connectTimeoutMs, "connectTimeoutMs");
  }

  /** What the SDK asks for a token where this session would authorize (a live connection refuses; an explicit flow goes ahead). */
  abstract tokens(ctx?: OAuthClientInformationContext): Promise<StoredOAuthTokens | undefined>;
  abstract clientInformation(ctx?: OAuthClientInformationContext): Promise<StoredOAuthClientInformation | undefined>;
  abstract redirectToAuthorization(authorizationUrl: URL): Promise<void>;
  abstract discoveryState(): Promise<OAuthDiscoveryState | undefined>;

  get redirectUrl(): string {
    return this.settings.redirectUri;
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

  /**
   * The client this session knows without registering: a configured one, one
   * registered during this session, or one stored for this binding (never one
   * registered with another authorization server, SEP-2352). `fresh` reads the
   * store again.
   */
  protected async knownClient(
    ctx: OAuthClientInformationContext | undefined,
    fresh: boolean,
  ): Promise<StoredOAuthClientInformation | undefined> {
    if (this.preRegistered) {
      return {
        client_id: this.settings.clientId!,
        ...(this.settings.clientSecret !== undefined && { client_secret: this.settings.clientSecret }),
        ...(ctx?.issuer !== undefined && { issuer: ctx.issuer }),
      } as StoredOAuthClientInformation;
    }
    if (this.flowClient) return this.flowClient;
    const stored = (await this.credentials.read(fresh))?.clientInformation;
    const sameServer = !stored?.issuer || ctx?.issuer === undefined || issuersMatch(stored.issuer, ctx.issuer);
    return stored && sameServer ? (stored as StoredOAuthClientInformation) : undefined;
  }

  async saveClientInformation(information: StoredOAuthClientInformation): Promise<void> {
    this.flowClient = information;
    // A configured client's secret stays in the settings; only obtained identities are stored.
    if (this.preRegistered) return;
    await this.credentials.change((entry) => {
      // Tokens belong to the client they were issued to: a new client identity drops them.
      if (entry.clientInformation?.client_id !== information.client_id) delete entry.tokens;
      entry.clientInformation = information as OAuthClientInformationMixed;
    });
  }

  /** The minimal AuthProvider view (the transports use the OAuth view of this object; this keeps the type honest). */
  async token(): Promise<string | undefined> {
    return (await this.tokens())?.access_token;
  }

  async saveTokens(tokens: StoredOAuthTokens): Promise<void> {
    try {
      await this.credentials.change((entry) => {
        entry.tokens = storedTokens(tokens);
        if (this.discovery) entry.discovery = asStoredDiscovery(this.discovery);
        if (this.resource !== undefined) entry.resource = this.resource;
        this.tokensSaved(entry);
      });
    } finally {
      await this.credentials.release();
    }
  }

  /** What else an entry records when new tokens are saved into it (nothing, unless an explicit flow obtained them). */
  protected tokensSaved(_entry: StoredEntry): void {}

  saveCodeVerifier(codeVerifier: string): void {
    this.verifier = codeVerifier;
  }

  codeVerifier(): string {
    if (this.verifier === undefined) throw new AuthorizationRequiredError(this.options.server, "no authorization flow is pending");
    return this.verifier;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.discovery = state;
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
      await this.credentials.change((entry) => {
        if (scope === "client" || scope === "all") delete entry.clientInformation;
        delete entry.tokens;
      });
    } finally {
      await this.credentials.release();
    }
  }

  /**
   * Every credential value this session has seen (tokens, client secrets, the
   * PKCE verifier, the state): what the SDK prints about this session, and any
   * error it causes, must never show them.
   */
  knownSecrets(): string[] {
    const entry = this.credentials.current;
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
      ...this.moreSecrets(),
    ];
    return values.filter((value): value is string => typeof value === "string" && value !== "");
  }

  /** Credential values only one kind of session holds. */
  protected moreSecrets(): readonly (string | undefined)[] {
    return [];
  }

  /** Releases anything this session still holds (a lock the SDK left taken after an error). */
  async dispose(): Promise<void> {
    await this.credentials.release();
  }
}
