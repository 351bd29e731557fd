/**
 * Authorization discovery of 2025-03-26 servers.
 *
 * Before protected-resource metadata (RFC 9728), an MCP server's authorization
 * server was its own origin: metadata at the root's
 * `/.well-known/oauth-authorization-server`, whatever the server's path. Such
 * servers often name an issuer with a path (`https://host/oauth`). The SDK
 * checks the issuer against the URL the metadata was found at (RFC 8414 §3.3)
 * and rejects that metadata, which would make every such server unusable.
 *
 * pi-mcp accepts it only on the legacy path, where the check protects nothing
 * the origin does not already own:
 * - no protected-resource metadata names an authorization server (neither at
 *   the challenge's `resource_metadata` URL nor at the well-known locations),
 *   so the SDK fell back to the server's origin;
 * - the metadata was found at that origin, and the issuer it names is a URL on
 *   the same origin (same scheme, host and port as the MCP server).
 * An issuer on any other origin is still rejected. The accepted discovery is
 * marked `legacyIssuer` and kept with the flow and the tokens, so later
 * connections and refreshes use it as is instead of discovering again.
 */
import {
  IssuerMismatchError,
  auth,
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
  discoverOAuthServerInfo,
  type AuthOptions,
  type AuthResult,
  type FetchLike,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
} from "@modelcontextprotocol/client";
import { PiMcpError } from "../../src/kernel/errors.ts";
import type { Redactor } from "../../src/kernel/types.ts";
import { createRedactor, safeHead } from "../../src/safety/text.ts";
import type { StoredDiscovery } from "./store.ts";

/** Discovery accepted by the 2025-03-26 rule. */
export type LegacyDiscovery = StoredDiscovery & { readonly legacyIssuer: true };

/** Whether some protected-resource metadata names an authorization server (then the legacy rule does not apply). */
async function namesAuthorizationServer(
  serverUrl: string | URL,
  resourceMetadataUrl: URL | undefined,
  fetchFn: FetchLike,
): Promise<boolean> {
  try {
    const metadata = await discoverOAuthProtectedResourceMetadata(
      serverUrl,
      resourceMetadataUrl ? { resourceMetadataUrl } : undefined,
      fetchFn,
    );
    return (metadata.authorization_servers?.length ?? 0) > 0;
  } catch (error) {
    // Not found (or unreadable) is the legacy case; a network failure, an oversized or late answer is not an answer.
    if (error instanceof TypeError || error instanceof PiMcpError) throw error;
    return false;
  }
}

function sameOrigin(issuer: string | undefined, origin: string): boolean {
  if (issuer === undefined) return false;
  try {
    const url = new URL(issuer);
    return url.origin === origin && url.search === "" && url.hash === "";
  } catch {
    return false;
  }
}

/**
 * The discovery to use for `serverUrl` after the SDK rejected its
 * authorization-server metadata with `error`, when the 2025-03-26 rule
 * accepts it; otherwise undefined (the rejection stands).
 */
export async function legacyDiscovery(
  serverUrl: string | URL,
  error: unknown,
  fetchFn: FetchLike,
  resourceMetadataUrl?: URL,
): Promise<LegacyDiscovery | undefined> {
  if (!(error instanceof IssuerMismatchError) || error.kind !== "metadata") return undefined;
  const root = new URL("/", serverUrl);
  const expected = error.expected?.replace(/\/$/, "");
  if (expected !== root.origin) return undefined; // found through protected-resource metadata, not the fallback
  if (!sameOrigin(error.received, root.origin)) return undefined;
  if (await namesAuthorizationServer(serverUrl, resourceMetadataUrl, fetchFn)) return undefined;
  const metadata = await discoverAuthorizationServerMetadata(root, { skipIssuerValidation: true, fetchFn });
  // Read again without the check: it must be the same same-origin issuer that was rejected.
  if (!metadata || metadata.issuer !== error.received || !sameOrigin(metadata.issuer, root.origin)) return undefined;
  return {
    authorizationServerUrl: root.href,
    authorizationServerMetadata: JSON.parse(JSON.stringify(metadata)) as Record<string, unknown>,
    legacyIssuer: true,
  };
}

/** One line for logs and the `auth` output about an accepted legacy issuer (public metadata, made safe before it is cut). */
export function describeLegacyDiscovery(discovery: LegacyDiscovery, redact: Redactor = createRedactor([])): string {
  const issuer = safeHead(String(discovery.authorizationServerMetadata?.issuer ?? ""), redact, 200);
  return `2025-03-26 authorization discovery: the authorization server at ${new URL(discovery.authorizationServerUrl).origin} names issuer ${issuer}; accepted because it is on the MCP server's own origin`;
}

/**
 * The SDK's auth(), retried once with the legacy discovery when the only
 * obstacle was the issuer of a 2025-03-26 server's metadata. Every request
 * goes through `options.fetchFn` (required: it bounds what the server sends).
 */
export async function authWithLegacyDiscovery(
  provider: OAuthClientProvider,
  options: AuthOptions & { readonly fetchFn: FetchLike },
  onLegacy?: (discovery: LegacyDiscovery) => void,
): Promise<AuthResult> {
  try {
    return await auth(provider, options);
  } catch (error) {
    const discovery = await legacyDiscovery(options.serverUrl, error, options.fetchFn, options.resourceMetadataUrl).catch(() => undefined);
    if (!discovery) throw error;
    await provider.saveDiscoveryState?.(discovery as unknown as OAuthDiscoveryState);
    onLegacy?.(discovery);
    return auth(provider, options);
  }
}

/**
 * Discovery for a connection that has nothing stored yet: undefined when the
 * SDK's own discovery works (it runs it again), the legacy discovery when only
 * the 2025-03-26 rule accepts the server's metadata, so such a server ends in
 * needs_auth like any other instead of failing.
 */
export async function probeLegacyDiscovery(serverUrl: string | URL, fetchFn: FetchLike): Promise<LegacyDiscovery | undefined> {
  try {
    await discoverOAuthServerInfo(serverUrl, { fetchFn });
    return undefined;
  } catch (error) {
    return legacyDiscovery(serverUrl, error, fetchFn).catch(() => undefined);
  }
}
