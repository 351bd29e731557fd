// The OAuth scenarios the conformance suite names, against the real
// authorization server of oauth-stack.ts (oidc-provider) and our host:
// Client ID Metadata Documents, a protected resource that names another
// resource, and the issuer checks (authorization server metadata, RFC 9207
// `iss` on the callback). `npm test` proves them without `npm run conformance`.
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { setBrowserOpener } from "../../plugins/auth-oauth/flow.ts";
import { CLIENT_METADATA_URL, type OAuthStackOptions } from "./fixtures/oauth-stack.ts";
import { authorizationUrlIn, runCommand, useOAuthScene } from "./helpers.ts";

const scene = useOAuthScene();

async function setup(options: OAuthStackOptions = {}, auth?: (redirectUri: string) => Record<string, unknown>): Promise<void> {
  await scene.sandbox((await scene.startStack(options)).mcpUrl, auth);
}

/** The store's entry for `remote`, or undefined when nothing is stored. */
async function storedEntry(): Promise<any> {
  const text = await readFile(scene.box.storePath, "utf8").catch(() => undefined);
  return text === undefined ? undefined : JSON.parse(text).servers.remote;
}

/** Starts a flow with --no-open and lets the "browser" run it: the callback URL the authorization server redirected to. */
async function callbackOfNewFlow(): Promise<URL> {
  const started = await runCommand(scene.box, ["auth", "remote", "--no-open"]);
  expect(started.exitCode, started.output).toBe(0);
  return new URL(await scene.stack.browse(authorizationUrlIn(started.output)));
}

/** Nothing reached the token endpoint and no tokens were stored. */
async function expectNoTokens(): Promise<void> {
  expect(scene.stack.counters.grants.authorization_code ?? 0).toBe(0);
  expect((await storedEntry())?.tokens).toBeUndefined();
}

describe("Client ID Metadata Documents", () => {
  it("an https client id is sent as the client_id when the authorization server supports metadata documents: no registration, the server fetches the document", async () => {
    await setup(
      {
        clientMetadata: (url) => ({
          client_id: url,
          client_name: "pi-mcp",
          redirect_uris: [scene.box.redirectUri],
          grant_types: ["authorization_code", "refresh_token"],
          response_types: ["code"],
          token_endpoint_auth_method: "none",
          application_type: "native",
        }),
      },
      (redirectUri) => ({ type: "oauth", clientId: CLIENT_METADATA_URL, redirectUri }),
    );
    setBrowserOpener(async (url) => void (await scene.stack.browse(url, { deliver: true })));
    const result = await runCommand(scene.box, ["auth", "remote"]);
    expect(result.exitCode, result.output).toBe(0);
    expect(scene.stack.counters.registrations).toBe(0);
    expect(scene.stack.counters.authorizationClientIds).toEqual([CLIENT_METADATA_URL]);
    expect(scene.stack.counters.clientMetadataFetches).toBeGreaterThan(0);
    expect(scene.stack.counters.grants.authorization_code).toBe(1);
    expect((await storedEntry()).client).toBe(`configured:${CLIENT_METADATA_URL}|${scene.box.redirectUri}`);

    const pi = await scene.host();
    await pi.waitFor("remote", "connected");
    expect(JSON.parse((await pi.call("whoami")).text)).toMatchObject({ sub: "test-user" });
  });

  it("an https client id with an authorization server that does not support metadata documents registers dynamically instead", async () => {
    await setup({}, (redirectUri) => ({ type: "oauth", clientId: CLIENT_METADATA_URL, redirectUri }));
    setBrowserOpener(async (url) => void (await scene.stack.browse(url, { deliver: true })));
    const result = await runCommand(scene.box, ["auth", "remote"]);
    expect(result.exitCode, result.output).toBe(0);
    expect(scene.stack.counters.registrations).toBe(1);
    const registered = (await storedEntry()).clientInformation.client_id;
    expect(registered).not.toBe(CLIENT_METADATA_URL);
    expect(scene.stack.counters.authorizationClientIds).toEqual([registered]);
    const pi = await scene.host();
    await pi.waitFor("remote", "connected");
  });
});

describe("resource indicators", () => {
  it("protected resource metadata naming another resource stops the flow before any registration or authorization request", async () => {
    await setup({ protectedResource: "https://evil.example.com/mcp" });
    setBrowserOpener(async () => {
      throw new Error("no browser may be opened for a mismatched resource");
    });
    const result = await runCommand(scene.box, ["auth", "remote"]);
    expect(result.exitCode).toBe(1);
    expect(result.output).toMatch(/resource https:\/\/evil\.example\.com\/mcp does not match/i);
    expect(result.progress.join("\n")).not.toContain("/auth?");
    expect(scene.stack.counters).toMatchObject({ registrations: 0, authorizations: 0 });
    await expectNoTokens();
    // A connection does not get further either, and registers nothing.
    const pi = await scene.host();
    await pi.waitFor("remote", ["needs_auth", "failed"]);
    expect(scene.stack.counters).toMatchObject({ registrations: 0, authorizations: 0 });
  });

  it("a connection that meets such metadata fails at once, without retrying what no retry can mend", async () => {
    await setup({ protectedResource: "https://evil.example.com/mcp" });
    const settings = JSON.parse(await readFile(scene.box.globalSettings, "utf8"));
    settings.mcp.retry = { maxRetries: 5, initialDelayMs: 20 };
    await scene.box.writeJson(scene.box.globalSettings, settings);
    const pi = await scene.host();
    await pi.waitFor("remote", ["needs_auth", "failed"]);
    const [status] = pi.host.status();
    expect(status).toMatchObject({ state: "failed", attempts: 1 });
    expect(status?.cause).toMatch(/resource https:\/\/evil\.example\.com\/mcp does not match/i);
    expect(scene.stack.counters).toMatchObject({ registrations: 0, authorizations: 0 });
  });
});

describe("issuer checks", () => {
  it("authorization server metadata whose issuer is not the server it was fetched from is refused before its endpoints are used", async () => {
    await setup({ metadataIssuer: "https://attacker.example.com" });
    setBrowserOpener(async () => {
      throw new Error("no browser may be opened for poisoned metadata");
    });
    const result = await runCommand(scene.box, ["auth", "remote"]);
    expect(result.exitCode).toBe(1);
    expect(result.output).toContain("different issuer");
    expect(scene.stack.counters).toMatchObject({ registrations: 0, authorizations: 0 });
    await expectNoTokens();
  });

  // oidc-provider advertises authorization_response_iss_parameter_supported and puts `iss` on every callback (RFC 9207).
  const refused: Record<string, (callback: URL, issuer: string) => void> = {
    "another issuer": (callback) => callback.searchParams.set("iss", "https://evil.example.com"),
    "the issuer with a trailing slash (no normalization)": (callback, issuer) => callback.searchParams.set("iss", `${issuer}/`),
    "no iss although the server advertises it": (callback) => callback.searchParams.delete("iss"),
  };
  for (const [change, tamper] of Object.entries(refused)) {
    it(`a callback carrying ${change} is refused without a token request; the genuine callback still completes`, async () => {
      await setup();
      const callback = await callbackOfNewFlow();
      expect(callback.searchParams.get("iss")).toBe(scene.stack.issuer);
      const tampered = new URL(callback);
      tamper(tampered, scene.stack.issuer);
      const result = await runCommand(scene.box, ["auth", "remote", "--callback", tampered.href]);
      expect(result.exitCode).toBe(1);
      expect(result.output).toContain("issuer does not match");
      expect(result.output).not.toContain(callback.searchParams.get("code")!);
      await expectNoTokens();

      const genuine = await runCommand(scene.box, ["auth", "remote", "--callback", callback.href]);
      expect(genuine.exitCode, genuine.output).toBe(0);
      expect(scene.stack.counters.grants.authorization_code).toBe(1);
    });
  }

  it("where the server does not advertise iss, a present iss is still compared and a wrong one refused; an absent one is accepted", async () => {
    await setup({ advertiseIssParameter: false });
    const callback = await callbackOfNewFlow();
    const wrong = new URL(callback);
    wrong.searchParams.set("iss", "https://evil.example.com");
    const refusedResult = await runCommand(scene.box, ["auth", "remote", "--callback", wrong.href]);
    expect(refusedResult.exitCode).toBe(1);
    expect(refusedResult.output).toContain("issuer does not match");
    await expectNoTokens();

    const absent = new URL(callback);
    absent.searchParams.delete("iss");
    const accepted = await runCommand(scene.box, ["auth", "remote", "--callback", absent.href]);
    expect(accepted.exitCode, accepted.output).toBe(0);
    expect(scene.stack.counters.grants.authorization_code).toBe(1);
  });
});
