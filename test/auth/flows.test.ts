// The edges of the explicit flow and of the settings: timeouts, one flow per
// process, `auth: {type: "none"}`, client registration, pre-registered clients,
// and what output and logs may show. Same real stack as oauth.test.ts.
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { authorize } from "../../plugins/auth-oauth/flow.ts";
import { setBrowserOpener } from "../../src/safety/browser.ts";
import { CredentialStore } from "../../plugins/auth-oauth/store.ts";
import type { RemoteDefinition } from "../../src/kernel/settings.ts";
import type { OAuthStackOptions } from "./fixtures/oauth-stack.ts";
import { accessTokenExpiry, runCommand, useOAuthScene } from "./helpers.ts";

const scene = useOAuthScene();

async function setup(options: OAuthStackOptions = {}, auth?: (redirectUri: string) => Record<string, unknown>) {
  await scene.sandbox((await scene.startStack(options)).mcpUrl, auth);
}

const host = () => scene.host();

function definition(): RemoteDefinition {
  return {
    enabled: true,
    transport: "http",
    url: scene.stack.mcpUrl,
    headers: {},
    auth: { type: "oauth", redirectUri: scene.box.redirectUri },
  };
}

describe("the explicit authorization flow", () => {
  it("times out with a clear message when the browser never comes back, and the flow stays completable", async () => {
    await setup();
    let opened = "";
    setBrowserOpener(async (url) => {
      opened = url;
    });
    const started = Date.now();
    const failure = await authorize({
      server: "remote",
      definition: definition(),
      store: new CredentialStore(scene.box.agentDir),
      print: () => undefined,
      timeoutMs: 400,
    }).catch((error: Error) => error);
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).message).toMatch(
      /timed out after 0 s waiting for the authorization callback on http:\/\/127\.0\.0\.1:\d+\/mcp\/oauth\/callback/,
    );
    expect((failure as Error).message).toContain("--callback");
    expect(Date.now() - started).toBeLessThan(5_000);
    // The listener is gone, the flow is still pending: the pasted callback completes it.
    const callback = await scene.stack.browse(opened);
    const done = await runCommand(scene.box, ["auth", "remote", "--callback", callback]);
    expect(done.exitCode, done.output).toBe(0);
  });

  it("allows one active flow per process", async () => {
    await setup();
    setBrowserOpener(async () => undefined);
    const options = {
      server: "remote",
      definition: definition(),
      store: new CredentialStore(scene.box.agentDir),
      print: () => undefined,
      timeoutMs: 1_500,
    };
    const first = authorize(options).catch((error: Error) => error);
    const second = await authorize(options).catch((error: Error) => error);
    expect((second as Error).message).toContain('an authorization flow for "remote" is already running in this process');
    expect(((await first) as Error).message).toContain("timed out");
  });

  it("the loopback listener ignores callbacks with another state and keeps waiting for the right one", async () => {
    await setup();
    setBrowserOpener(async (url) => {
      const callback = new URL(await scene.stack.browse(url));
      const forged = new URL(callback);
      forged.searchParams.set("state", "someone-elses-state");
      expect((await fetch(forged)).status).toBe(400);
      expect((await fetch(new URL("/elsewhere", callback))).status).toBe(404);
      await fetch(callback);
    });
    const result = await runCommand(scene.box, ["auth", "remote"]);
    expect(result.exitCode, result.output).toBe(0);
    expect(scene.stack.counters.grants.authorization_code).toBe(1);
  });

  it("a scope a running connection was refused is requested by the next auth (step-up)", async () => {
    await setup();
    setBrowserOpener(async (url) => void (await scene.stack.browse(url, { deliver: true })));
    expect((await runCommand(scene.box, ["auth", "remote"])).exitCode).toBe(0);
    const file = JSON.parse(await readFile(scene.box.storePath, "utf8"));
    file.servers.remote.scopeHint = "mcp:tools offline_access";
    await (await import("node:fs/promises")).writeFile(scene.box.storePath, JSON.stringify(file));
    expect((await runCommand(scene.box, ["auth", "remote"])).exitCode).toBe(0);
    expect(scene.stack.counters.requestedScopes.at(-1)!.split(" ").sort()).toEqual(["mcp:tools", "offline_access"]);
    expect(JSON.parse(await readFile(scene.box.storePath, "utf8")).servers.remote.scopeHint).toBeUndefined();
  });
});

describe("settings and client identities", () => {
  it('auth {type: "none"} disables OAuth discovery: needs_auth without any metadata request', async () => {
    await setup({}, () => ({ type: "none" }));
    const pi = await host();
    await pi.waitFor("remote", "needs_auth");
    expect(scene.stack.counters.resourceMetadataRequests).toBe(0);
    const refused = await runCommand(scene.box, ["auth", "remote"]);
    expect(refused.exitCode).toBe(1);
    expect(refused.output).toContain('uses auth type "none"');
  });

  it("omitted auth still discovers OAuth when the server asks for it", async () => {
    await setup({}, () => undefined as unknown as Record<string, unknown>);
    const pi = await host();
    await pi.waitFor("remote", "needs_auth");
    expect(scene.stack.counters.resourceMetadataRequests).toBeGreaterThan(0);
    expect(scene.stack.counters.registrations).toBe(0);
  });

  it("without dynamic registration: needs_client_registration, then a pre-registered client authorizes with its secret", async () => {
    await setup({ registration: false });
    const pi = await host();
    await pi.waitFor("remote", "needs_client_registration");
    expect(pi.cause("remote")).toContain("auth.clientId");
    const refused = await runCommand(scene.box, ["auth", "remote"]);
    expect(refused.exitCode).toBe(1);
    expect(refused.output).toContain("auth.clientId");
    await pi.stop();
    await scene.stack.stop();

    const secret = "pre-registered-secret-value-123";
    await scene.startStack({
      registration: false,
      staticClient: { client_id: "pi-mcp-registered", client_secret: secret, redirect_uris: [scene.box.redirectUri] },
    });
    await scene.box.writeJson(scene.box.globalSettings, {
      mcp: {
        servers: {
          remote: {
            url: scene.stack.mcpUrl,
            auth: { type: "oauth", clientId: "pi-mcp-registered", clientSecret: "${CLIENT_SECRET}", redirectUri: scene.box.redirectUri },
          },
        },
      },
    });
    const env = { CLIENT_SECRET: secret };
    const boxWithSecret = { ...scene.box, env: (extra: Record<string, string> = {}) => scene.box.env({ ...env, ...extra }) };
    setBrowserOpener(async (url) => void (await scene.stack.browse(url, { deliver: true })));
    const result = await runCommand(boxWithSecret, ["auth", "remote"]);
    expect(result.exitCode, result.output).toBe(0);
    expect(scene.stack.counters.registrations).toBe(0);
    const stored = await readFile(scene.box.storePath, "utf8");
    expect(stored).not.toContain(secret); // a configured secret stays in the settings
    expect(JSON.parse(stored).servers.remote.client).toBe(`configured:pi-mcp-registered|${scene.box.redirectUri}`);
  });

  it("an entry bound to another URL or client is never used", async () => {
    await setup();
    setBrowserOpener(async (url) => void (await scene.stack.browse(url, { deliver: true })));
    expect((await runCommand(scene.box, ["auth", "remote"])).exitCode).toBe(0);
    // Same server name, another client identity (a configured client id): the stored tokens do not apply.
    await scene.box.writeJson(scene.box.globalSettings, {
      mcp: {
        servers: {
          remote: { url: scene.stack.mcpUrl, auth: { type: "oauth", clientId: "other-client", redirectUri: scene.box.redirectUri } },
        },
      },
    });
    const pi = await host();
    await pi.waitFor("remote", "needs_auth");
    expect(scene.stack.counters.grants.refresh_token ?? 0).toBe(0);
  });
});

describe("secrets", () => {
  it("never shows tokens, codes, verifiers or callback URLs in output, status or the retained log", async () => {
    await setup({ accessTokenTtlSeconds: 2 });
    const outputs: string[] = [];
    let callback = "";
    setBrowserOpener(async (url) => {
      callback = await scene.stack.browse(url, { deliver: true });
    });
    const result = await runCommand(scene.box, ["auth", "remote"]);
    outputs.push(result.output, ...result.progress);
    const entry = JSON.parse(await readFile(scene.box.storePath, "utf8")).servers.remote;
    const secrets = [
      entry.tokens.tokens.access_token,
      entry.tokens.tokens.refresh_token,
      new URL(callback).searchParams.get("code")!,
      callback,
    ];
    const pi = await host();
    await pi.waitFor("remote", "connected");
    await scene.stack.revokeRefreshToken(entry.tokens.tokens.refresh_token);
    await accessTokenExpiry(scene.box.storePath);
    outputs.push((await pi.call("echo", { text: "x" }).catch((error: Error) => ({ text: error.message }))).text);
    await pi.waitFor("remote", "needs_auth");
    outputs.push(pi.cause("remote") ?? "", pi.host.server("remote")!.log.text());
    outputs.push((await runCommand(scene.box, ["auth", "remote", "--callback", callback])).output);
    outputs.push((await runCommand(scene.box, ["list"])).output);
    const all = outputs.join("\n");
    for (const secret of secrets) expect(all).not.toContain(secret);
  });
});
