/**
 * The explicit authorization flow behind `auth <server>`: the only place that
 * starts one. A running connection never does (see connection-session.ts).
 *
 * 1. Probe the server without credentials to read its challenge
 *    (`WWW-Authenticate`: scope, resource_metadata), as the first protected
 *    request would. Scope: the configured scopes, else the challenge's, plus
 *    any scope a running connection was refused (step-up); with none, the SDK
 *    takes the resource's `scopes_supported`.
 * 2. The SDK's auth(): fresh discovery, issuer and resource checks,
 *    registration if needed (CIMD or DCR), PKCE S256 and state. The pending
 *    flow (state, verifier, discovery, redirect URI) is persisted, so another
 *    process can complete it.
 * 3. Print the authorization URL, then try to open a browser (unless
 *    --no-open), and wait for the loopback callback until the timeout. Or
 *    complete a pending flow from a pasted callback URL or a code/state pair.
 *
 * One flow at a time per process. Errors never carry tokens, secrets, codes,
 * verifiers or callback URLs.
 */
import {
  AuthorizationServerMismatchError,
  Client,
  InsufficientScopeError,
  IssuerMismatchError,
  OAuthError,
  RegistrationRejectedError,
  SSEClientTransport,
  StreamableHTTPClientTransport,
  auth,
  computeScopeUnion,
  extractWWWAuthenticateParams,
  type AuthProvider,
  type AuthorizationServerMetadata,
  type Transport,
} from "@modelcontextprotocol/client";
import { DEFAULTS, type RemoteDefinition } from "../../src/kernel/settings.ts";
import { describeError } from "../../src/kernel/errors.ts";
import { withDeadline } from "../../src/kernel/async.ts";
import { CLIENT_INFO } from "../../src/kernel/protocol.ts";
import type { Redactor } from "../../src/kernel/types.ts";
import { documentFetch } from "../../src/safety/bounded-fetch.ts";
import { openWebPage, webUrl } from "../../src/safety/browser.ts";
import { withSdkOutput } from "../../src/safety/sdk-output.ts";
import { createRedactor, safeHead } from "../../src/safety/text.ts";
import { AuthFlowError, ClientRegistrationRequiredError, CredentialStoreError } from "./errors.ts";
import { authWithLegacyDiscovery, describeLegacyDiscovery } from "./legacy.ts";
import { listenForCallback, sameText, type LoopbackListener } from "./loopback.ts";
import { FlowSession } from "./flow-session.ts";
import { oauthSettings } from "./settings.ts";
import { PENDING_FLOW_TTL_MS, definitionBinding, type CredentialStore, type PendingFlow } from "./store.ts";

/** Where `auth` opens the authorization URL; tests and the conformance harness replace the opener (it stays behind the URL check). */
export { setBrowserOpener, type BrowserOpener } from "../../src/safety/browser.ts";

/** How long `auth` waits for the browser to come back to the loopback redirect. */
export const DEFAULT_FLOW_TIMEOUT_MS = 5 * 60_000;

export interface AuthorizeOptions {
  readonly server: string;
  readonly definition: RemoteDefinition;
  readonly store: CredentialStore;
  /** Progress lines, shown at once (the authorization URL is the first). */
  readonly print: (text: string) => void;
  /** false: print the URL and return; the flow is completed later with a callback URL or code/state. */
  readonly open?: boolean;
  readonly callbackUrl?: string;
  readonly code?: string;
  readonly state?: string;
  readonly timeoutMs?: number;
  /** For the unauthenticated probe of the server. */
  readonly connectTimeoutMs?: number;
  /** What the caller must never show (settings' secrets, values typed on the command line); the flow adds its own. */
  readonly redact?: Redactor;
  /**
   * Where the MCP SDK's own console output during the flow goes, already
   * redacted with the flow's values (a server's retained log); without it,
   * that output is dropped. It never reaches the terminal.
   */
  readonly sdkLog?: (line: string) => void;
}

/** The values one `auth` run has seen (code, verifier, state, credentials): its errors and the SDK's output never show them. */
class FlowValues {
  private readonly values = new Set<string>();
  private readonly sessions = new Set<FlowSession>();
  private readonly base: Redactor | undefined;
  constructor(base: Redactor | undefined) {
    this.base = base;
  }

  add(...values: readonly string[]): void {
    for (const value of values) this.values.add(value);
  }

  session(session: FlowSession): FlowSession {
    this.sessions.add(session);
    return session;
  }

  redactor(): Redactor {
    return createRedactor([...this.values, ...[...this.sessions].flatMap((session) => session.knownSecrets())], this.base);
  }
}

export type AuthorizeOutcome = { readonly status: "authorized" } | { readonly status: "pending"; readonly authorizationUrl: string };

let activeFlow: string | undefined;

/** Runs `auth <server>`: a new flow, or the completion of a pending one. */
export async function authorize(options: AuthorizeOptions): Promise<AuthorizeOutcome> {
  if (activeFlow !== undefined) {
    throw new AuthFlowError(
      `an authorization flow for "${activeFlow}" is already running in this process; finish it or wait until it times out`,
    );
  }
  activeFlow = options.server;
  const values = new FlowValues(options.redact);
  if (options.code !== undefined) values.add(options.code);
  try {
    return await withSdkOutput(
      (line) => options.sdkLog?.(values.redactor()(line)),
      () => run(options, values),
    );
  } finally {
    activeFlow = undefined;
  }
}

/** A new flow, or the completion of a pending one (a pasted callback URL, or a code and state). */
async function run(options: AuthorizeOptions, values: FlowValues): Promise<AuthorizeOutcome> {
  if (options.callbackUrl !== undefined) {
    let url: URL;
    try {
      url = new URL(options.callbackUrl);
    } catch {
      throw new AuthFlowError("--callback takes the full URL the browser was sent to after authorizing");
    }
    await complete(options, { url }, values);
    return { status: "authorized" };
  }
  if (options.code !== undefined || options.state !== undefined) {
    if (!options.code || !options.state) throw new AuthFlowError("--code and --state go together");
    await complete(options, { code: options.code, state: options.state }, values);
    return { status: "authorized" };
  }
  return await start(options, values);
}

async function start(options: AuthorizeOptions, values: FlowValues): Promise<AuthorizeOutcome> {
  const { server, definition, store } = options;
  const settings = oauthSettings(definition);
  const binding = definitionBinding(definition);
  const stored = await store.entry(server, binding); // a malformed store stops here, untouched
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs;
  const challenge = await probeChallenge(definition, connectTimeoutMs);
  const scope = computeScopeUnion(settings.scopes?.join(" ") ?? challenge.scope, stored?.scopeHint);

  const waiting = options.open !== false;
  let expectedState = "";
  const listener: LoopbackListener | undefined = waiting ? await listenForCallback(settings.redirectUri, () => expectedState) : undefined;
  try {
    const session = values.session(new FlowSession({ server, definition, store, connectTimeoutMs }));
    try {
      const authOptions = {
        serverUrl: definition.url,
        ...(scope !== undefined && { scope }),
        ...(challenge.resourceMetadataUrl && { resourceMetadataUrl: challenge.resourceMetadataUrl }),
        forceReauthorization: true,
        fetchFn: session.fetch,
      };
      const result = await authWithLegacyDiscovery(session, authOptions, (discovery) =>
        options.print(`Note: ${describeLegacyDiscovery(discovery, options.redact)}.`),
      );
      if (result === "AUTHORIZED") return { status: "authorized" };
    } catch (error) {
      throw flowError(server, error, values.redactor());
    } finally {
      await session.dispose();
    }
    const authorizationUrl = session.authorizationUrl;
    const discovery = session.flowDiscovery;
    if (!authorizationUrl || !session.flowState || !session.flowVerifier || !discovery)
      throw new AuthFlowError("the authorization flow could not be started");
    // Checked before anything is stored, printed or opened: a `file:` or custom-scheme endpoint never reaches the person or the opener.
    const url = webUrl(authorizationUrl.href, server, "its authorization server's authorization endpoint").href;
    const metadata = discovery.authorizationServerMetadata as AuthorizationServerMetadata | undefined;
    const pending: PendingFlow = {
      state: session.flowState,
      codeVerifier: session.flowVerifier,
      redirectUri: settings.redirectUri,
      issuer: metadata?.issuer ?? discovery.authorizationServerUrl,
      discovery,
      ...(authorizationUrl.searchParams.get("scope") && { scope: authorizationUrl.searchParams.get("scope")! }),
      startedAt: Date.now(),
    };
    await store.updateEntry(server, binding, (entry) => {
      entry.pending = pending;
    });
    if (!listener) return { status: "pending", authorizationUrl: url };

    expectedState = pending.state;
    options.print(`Authorize pi-mcp for "${server}" in your browser:\n  ${url}`);
    try {
      await openWebPage(url, server, "its authorization server's authorization endpoint");
    } catch {
      options.print("(Could not open a browser: open the URL above yourself.)");
    }
    const timeoutMs = options.timeoutMs ?? DEFAULT_FLOW_TIMEOUT_MS;
    options.print(`Waiting up to ${Math.round(timeoutMs / 1000)} s for the browser to return to ${settings.redirectUri} ...`);
    const callback = await withDeadline(
      listener.callback,
      timeoutMs,
      () =>
        new AuthFlowError(
          `timed out after ${Math.round(timeoutMs / 1000)} s waiting for the authorization callback on ${settings.redirectUri}; ` +
            `the flow stays pending for ${PENDING_FLOW_TTL_MS / 60_000} minutes: complete it with \`auth ${server} --callback <URL>\` ` +
            "(the full URL the browser was sent to), or run auth again",
        ),
    );
    await complete(options, { url: callback }, values);
    return { status: "authorized" };
  } finally {
    await listener?.close();
  }
}

type CallbackInput = { readonly url: URL } | { readonly code: string; readonly state: string };

/** The second leg: validates the callback against the pending flow and exchanges the code. */
async function complete(options: AuthorizeOptions, input: CallbackInput, values: FlowValues): Promise<void> {
  const { server, definition, store } = options;
  const pending = (await store.entry(server, definitionBinding(definition)))?.pending;
  if (!pending)
    throw new AuthFlowError(
      `no authorization flow is pending for "${server}" (with its current URL and client); run \`auth ${server}\` first`,
    );
  if (Date.now() - pending.startedAt > PENDING_FLOW_TTL_MS)
    throw new AuthFlowError(`the pending authorization flow for "${server}" has expired; run \`auth ${server}\` again`);

  const metadata = pending.discovery.authorizationServerMetadata as AuthorizationServerMetadata | undefined;
  let code: string;
  let iss: string | undefined;
  if ("url" in input) {
    const expected = new URL(pending.redirectUri);
    if (input.url.origin !== expected.origin || input.url.pathname !== expected.pathname) {
      throw new AuthFlowError(
        `the callback URL is not the loopback redirect URI of the pending flow (${expected.origin}${expected.pathname})`,
      );
    }
    const state = input.url.searchParams.get("state");
    if (state === null || !sameText(state, pending.state))
      throw new AuthFlowError("the callback's state does not match the pending authorization flow; nothing was stored");
    iss = input.url.searchParams.get("iss") ?? undefined;
    const received = input.url.searchParams.get("code");
    if (received === null) {
      // An error answer: its text is only shown once the issuer checks out (RFC 9207), and only as a code.
      if (iss !== undefined ? iss !== pending.issuer : metadata?.authorization_response_iss_parameter_supported === true) {
        throw new AuthFlowError("the callback's issuer does not match the authorization server of the pending flow; nothing was stored");
      }
      const error = (input.url.searchParams.get("error") ?? "no code").replace(/[^\w.-]/g, "").slice(0, 64);
      throw new AuthFlowError(`the authorization server did not authorize pi-mcp (${error})`);
    }
    code = received;
  } else {
    if (!sameText(input.state, pending.state))
      throw new AuthFlowError("--state does not match the pending authorization flow; nothing was stored");
    code = input.code;
    // A pasted pair carries no `iss`. The verified state binds it to the pending flow, whose
    // authorization server (the only one the code is sent to) is the recorded issuer.
    if (metadata?.authorization_response_iss_parameter_supported === true) iss = pending.issuer;
  }

  values.add(code, pending.codeVerifier, pending.state);
  const session = values.session(
    new FlowSession({
      server,
      definition,
      store,
      pending,
      connectTimeoutMs: options.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs,
    }),
  );
  try {
    await auth(session, {
      serverUrl: definition.url,
      authorizationCode: code,
      ...(iss !== undefined && { iss }),
      ...(pending.discovery.resourceMetadataUrl && { resourceMetadataUrl: new URL(pending.discovery.resourceMetadataUrl) }),
      ...(pending.scope !== undefined && { scope: pending.scope }),
      fetchFn: session.fetch,
    });
  } catch (error) {
    throw flowError(server, error, values.redactor());
  } finally {
    await session.dispose();
  }
}

interface Challenge {
  scope?: string;
  resourceMetadataUrl?: URL;
}

class ProbeStop extends Error {}

/**
 * Connects without credentials, as a first protected request would, and
 * records the server's challenge: a 401 (on connect or on tools/list), or a
 * 403 insufficient_scope.
 */
async function probeChallenge(definition: RemoteDefinition, timeoutMs: number): Promise<Challenge> {
  const found: Challenge = {};
  const provider: AuthProvider = {
    token: async () => undefined,
    onUnauthorized: async (context) => {
      const params = extractWWWAuthenticateParams(context.response);
      if (params.scope) found.scope = params.scope;
      if (params.resourceMetadataUrl) found.resourceMetadataUrl = params.resourceMetadataUrl;
      throw new ProbeStop("probe finished");
    },
  };
  const url = new URL(definition.url);
  const requestInit = { headers: { ...definition.headers } };
  // The probe lasts one connect timeout at most, its answers one message each.
  const fetch = documentFetch(timeoutMs, "connectTimeoutMs");
  const transport: Transport =
    definition.transport === "sse"
      ? new SSEClientTransport(url, { requestInit, authProvider: provider, fetch })
      : new StreamableHTTPClientTransport(url, { requestInit, authProvider: provider, onInsufficientScope: "throw", fetch });
  const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: "auto", probe: { timeoutMs } } });
  const note = (error: unknown) => {
    if (error instanceof InsufficientScopeError) {
      if (error.requiredScope) found.scope = error.requiredScope;
      if (error.resourceMetadataUrl) found.resourceMetadataUrl = error.resourceMetadataUrl;
    }
  };
  try {
    await withDeadline(client.connect(transport, { timeout: timeoutMs }), timeoutMs, () => new ProbeStop("probe timed out"));
    if (client.getServerCapabilities()?.tools) {
      const any = { "~standard": { version: 1 as const, vendor: "pi-mcp", validate: (value: unknown) => ({ value }) } };
      await client.request({ method: "tools/list", params: {} }, any, { timeout: timeoutMs });
    }
  } catch (error) {
    note(error);
  } finally {
    await client.close().catch(() => undefined);
  }
  return found;
}

/** A flow failure as a message without secrets: redacted, stripped, then cut. */
function flowError(server: string, error: unknown, redact: Redactor): Error {
  if (error instanceof AuthFlowError || error instanceof CredentialStoreError || error instanceof ClientRegistrationRequiredError)
    return error;
  if (error instanceof IssuerMismatchError) {
    return new AuthFlowError(
      error.kind === "metadata"
        ? "the authorization server's metadata names a different issuer than the one it was discovered at; nothing was stored"
        : "the callback's issuer does not match the authorization server of the flow (RFC 9207); nothing was stored",
    );
  }
  if (error instanceof AuthorizationServerMismatchError) {
    return new AuthFlowError(`the authorization server changed since the flow started; run \`auth ${server}\` again`);
  }
  if (error instanceof RegistrationRejectedError) {
    let code = "";
    try {
      const parsed = JSON.parse(error.body) as { error?: unknown };
      if (typeof parsed.error === "string") code = `, ${parsed.error.replace(/[^\w.-]/g, "").slice(0, 64)}`;
    } catch {
      // not JSON: say nothing about it
    }
    return new AuthFlowError(`the authorization server rejected pi-mcp's dynamic client registration (HTTP ${error.status}${code})`);
  }
  if (error instanceof OAuthError)
    return new AuthFlowError(
      `the authorization server refused the request (${String(error.code)
        .replace(/[^\w.-]/g, "")
        .slice(0, 64)})`,
    );
  const issues = schemaIssues(error);
  if (issues)
    return new AuthFlowError(
      `the authorization server's metadata is not valid (${safeHead(issues, redact, 300)}); nothing was stored or opened`,
    );
  const message = describeError(error);
  if (/does not support dynamic client registration/.test(message)) {
    return new ClientRegistrationRequiredError(server, "its authorization server does not support dynamic client registration");
  }
  return new AuthFlowError(`authorization failed: ${safeHead(message, redact, 400)}`);
}

/** A schema failure of what a server sent (the SDK checks metadata with zod): `path: message; ...`, else undefined. */
function schemaIssues(error: unknown): string | undefined {
  const issues = (error as { issues?: unknown } | undefined)?.issues;
  if (!Array.isArray(issues) || issues.length === 0) return undefined;
  return issues
    .map(
      (issue: { path?: unknown; message?: unknown }) =>
        `${Array.isArray(issue.path) ? issue.path.join(".") : "?"}: ${String(issue.message)}`,
    )
    .join("; ");
}
