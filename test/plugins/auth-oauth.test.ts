/**
 * The auth-oauth plugin in-process (fixture servers over the SDK's in-memory
 * transport pair; the credential store in the host's agent folder): which
 * servers it hands an OAuth provider, and what that provider, the one a
 * running connection holds, does with the store and where it stops. It reads
 * the stored tokens anew for every request and only those bound to the
 * server's URL and client as configured now; it never starts an interactive
 * flow, but answers with the coded errors that put the server in `needs_auth`
 * or `needs_client_registration`; and the stored authorization is part of the
 * connection's identity. The real-HTTP flows against an authorization server
 * are test/auth.
 */
import type { OAuthDiscoveryState, OAuthTokens } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it } from "vitest";
import { ConnectionSession } from "../../plugins/auth-oauth/connection-session.ts";
import { OAuthPlugin } from "../../plugins/auth-oauth/index.ts";
import { CredentialStore, credentialQueries, definitionBinding, type StoredEntry } from "../../plugins/auth-oauth/store.ts";
import type { RemoteDefinition } from "../../src/kernel/settings.ts";
import type { TransportContext } from "../../src/kernel/types.ts";
import { type PluginTestHost, pluginHost, remoteFixture, stopAllHosts } from "./harness.ts";

afterEach(stopAllHosts);

/** A host with only the OAuth plugin and one server, `docs`, connected: what its connection was handed. */
async function connected(settings: Record<string, unknown> = {}): Promise<{ h: PluginTestHost; context: TransportContext }> {
  const h = await pluginHost([new OAuthPlugin()], { docs: remoteFixture(settings) });
  await h.waitForState("docs", "connected");
  return { h, context: h.server("docs").transports[0]! };
}

const providerOf = (context: TransportContext) => context.auth!.authProvider as ConnectionSession;
const storeOf = (context: TransportContext) => new CredentialStore(context.host.agentDir);
const definitionOf = (context: TransportContext) => context.server.definition as RemoteDefinition;

/** Stores `entry` for docs as an `auth` elsewhere would (bound to `definition`'s URL and client). */
function store(context: TransportContext, change: (entry: StoredEntry) => void, definition = definitionOf(context)): Promise<StoredEntry> {
  return storeOf(context).updateEntry("docs", definitionBinding(definition), change);
}

const tokens = (access: string): OAuthTokens => ({ access_token: access, token_type: "Bearer", refresh_token: `refresh-${access}` });

describe("which servers it serves", () => {
  it("hands remote servers whose auth is oauth or omitted a connection's provider (never the explicit flow's), and local, bearer or none servers nothing", async () => {
    const h = await pluginHost([new OAuthPlugin()], {
      oauth: remoteFixture({ auth: { type: "oauth" } }),
      omitted: remoteFixture(),
      local: { build: () => {} },
      bearer: remoteFixture({ auth: { type: "bearer", token: "t0ken-value" } }),
      none: remoteFixture({ auth: { type: "none" } }),
    });
    const handed = async (name: string) => {
      await h.waitForState(name, "connected");
      return h.server(name).transports[0]!.auth;
    };
    for (const name of ["oauth", "omitted"]) {
      const auth = await handed(name);
      expect(auth?.authProvider, name).toBeInstanceOf(ConnectionSession);
      expect(auth?.secrets?.(), name).toEqual([]); // nothing stored yet: no credential to redact
    }
    for (const name of ["local", "bearer", "none"]) expect(await handed(name), name).toBeUndefined();
  });
});

describe("the provider a connection holds", () => {
  it("sends what is stored now: tokens an `auth` elsewhere stored, without a reconnect, and none after a logout", async () => {
    const { context } = await connected();
    const provider = providerOf(context);
    expect(await provider.tokens()).toBeUndefined();
    await store(context, (entry) => {
      entry.tokens = { tokens: tokens("first"), obtainedAt: Date.now() };
    });
    expect(await provider.tokens()).toEqual(tokens("first"));
    // What it sends may show up in what the SDK prints: those values are redacted.
    expect(context.auth!.secrets!()).toEqual(expect.arrayContaining(["first", "refresh-first"]));
    await store(context, (entry) => {
      entry.tokens = { tokens: tokens("second"), obtainedAt: Date.now() };
    });
    expect(await provider.tokens()).toEqual(tokens("second"));
    expect(await credentialQueries(context.host.agentDir).remove("docs")).toBe(true);
    expect(await provider.tokens()).toBeUndefined();
  });

  it("never sends tokens bound to another URL or client than the server's settings name now", async () => {
    const { context } = await connected({ auth: { type: "oauth", clientId: "pi-mcp-docs" } });
    const elsewhere = { ...definitionOf(context), url: "https://other.example.test/mcp" };
    await store(context, (entry) => (entry.tokens = { tokens: tokens("other-url"), obtainedAt: Date.now() }), elsewhere);
    expect(await providerOf(context).tokens()).toBeUndefined();
    const anotherClient = { ...definitionOf(context), auth: { type: "oauth" as const, clientId: "another-client" } };
    await store(context, (entry) => (entry.tokens = { tokens: tokens("other-client"), obtainedAt: Date.now() }), anotherClient);
    expect(await providerOf(context).tokens()).toBeUndefined();
    await store(context, (entry) => (entry.tokens = { tokens: tokens("ours"), obtainedAt: Date.now() }));
    expect(await providerOf(context).tokens()).toEqual(tokens("ours"));
  });

  it("never starts a flow: where the SDK would send a browser it fails with needs_auth, naming the command, and keeps the scope for the next `auth`", async () => {
    const { context } = await connected();
    const authorize = new URL("https://auth.example.test/authorize?response_type=code&scope=files%3Aread+files%3Awrite");
    await expect(providerOf(context).redirectToAuthorization(authorize)).rejects.toMatchObject({
      code: "needs_auth",
      message: 'MCP server "docs" needs authorization (no stored authorization): run /mcp auth docs (or pi-mcp auth docs)',
    });
    expect(await storeOf(context).entry("docs", definitionBinding(definitionOf(context)))).toMatchObject({
      scopeHint: "files:read files:write",
    });
  });

  it("without a client it knows it needs `auth` (needs_auth); where the authorization server can give it none, a registered client (needs_client_registration)", async () => {
    const { context } = await connected();
    const provider = providerOf(context);
    await expect(provider.clientInformation()).rejects.toMatchObject({ code: "needs_auth" });
    const noRegistration = {
      authorizationServerUrl: "https://auth.example.test",
      authorizationServerMetadata: {
        issuer: "https://auth.example.test",
        authorization_endpoint: "https://auth.example.test/authorize",
        token_endpoint: "https://auth.example.test/token",
        response_types_supported: ["code"],
      },
    } satisfies OAuthDiscoveryState;
    provider.saveDiscoveryState(noRegistration);
    await expect(provider.clientInformation()).rejects.toMatchObject({
      code: "needs_client_registration",
      message: expect.stringContaining("set auth.clientId (and auth.clientSecret) in its settings"),
    });
  });
});

describe("the connection's identity", () => {
  it("follows the stored authorization: an `auth` or a logout elsewhere changes it, a refreshed token does not", async () => {
    const { h, context } = await connected();
    const identity = () => h.kernel.hooks.authIdentity.call("settings", context);
    const none = identity();
    await store(context, (entry) => {
      entry.clientInformation = { client_id: "registered" };
      entry.tokens = { tokens: tokens("first"), obtainedAt: Date.now() };
      entry.authorizedAt = 1;
    });
    const authorized = identity();
    expect(authorized).not.toBe(none);
    await store(context, (entry) => {
      entry.tokens = { tokens: tokens("refreshed"), obtainedAt: Date.now() };
    });
    expect(identity()).toBe(authorized);
    await store(context, (entry) => {
      entry.authorizedAt = 2;
    });
    expect(identity()).not.toBe(authorized);
    await credentialQueries(context.host.agentDir).remove("docs");
    expect(identity()).toBe(none);
  });
});
