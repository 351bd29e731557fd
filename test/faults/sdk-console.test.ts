// What the MCP SDK prints to `console`: a token endpoint whose error_description
// repeats the request it got (the authorization code, the PKCE verifier, the
// refresh token, the client secret), against the real OAuth stack. Nothing of it
// reaches the terminal of the pi-mcp CLI (its own process); inside a host it
// lands in the server's retained log, redacted.
import { readFile, writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { setBrowserOpener } from "../../src/safety/browser.ts";
import { REDACTED } from "../../src/safety/text.ts";
import { authorizationUrlIn, cliProcess, runCommand, useOAuthScene } from "../auth/helpers.ts";

const CLIENT = { client_id: "pi-mcp-static", client_secret: "static-client-secret-5f2e9c7a1b" };

describe("a token endpoint that repeats what it was sent", () => {
  const scene = useOAuthScene();

  /** A sandbox whose `remote` uses the stack's pre-registered confidential client (its secret written in settings). */
  async function sandbox(): Promise<void> {
    const box = await scene.sandbox("http://127.0.0.1:9/mcp"); // first: the client is registered with its loopback redirect
    const stack = await scene.startStack({ registration: false, staticClient: { ...CLIENT, redirect_uris: [box.redirectUri] } });
    const auth = { type: "oauth", clientId: CLIENT.client_id, clientSecret: CLIENT.client_secret, redirectUri: box.redirectUri };
    await box.writeJson(box.globalSettings, {
      mcp: {
        connectTimeoutMs: 5_000,
        requestTimeoutMs: 10_000,
        retry: { maxRetries: 0 },
        servers: { remote: { url: stack.mcpUrl, auth } },
      },
    });
  }

  /** Starts a flow with --no-open and lets the "browser" authorize: the callback URL and the flow's PKCE verifier. */
  async function pendingFlow(run: (argv: string[]) => Promise<string>): Promise<{ callback: string; code: string; verifier: string }> {
    const url = authorizationUrlIn(await run(["auth", "remote", "--no-open"]));
    const callback = await scene.stack.browse(url);
    const verifier = JSON.parse(await readFile(scene.box.storePath, "utf8")).servers.remote.pending.codeVerifier as string;
    return { callback, code: new URL(callback).searchParams.get("code")!, verifier };
  }

  it("pi-mcp auth --callback (its own process) prints none of the code, the verifier or the client secret", async () => {
    await sandbox();
    const flow = await pendingFlow(async (argv) => (await cliProcess(scene.box, argv)).stdout);
    scene.stack.echoTokenRequests("invalid_grant");
    const done = await cliProcess(scene.box, ["auth", "remote", "--callback", flow.callback]);
    expect(done.code).toBe(1);
    expect(done.stderr.trim()).toBe("auth remote: the authorization server refused the request (invalid_grant)");
    expect(done.stdout).toBe("");
    for (const secret of [flow.code, flow.verifier, CLIENT.client_secret]) expect(`${done.stdout}${done.stderr}`).not.toContain(secret);
  });

  it("/mcp auth --callback puts the SDK's message in the server's retained log, redacted", async () => {
    await sandbox();
    const pi = await scene.host();
    await pi.waitFor("remote", "needs_auth");
    const flow = await pendingFlow(async (argv) => (await runCommand(scene.box, argv)).output);
    scene.stack.echoTokenRequests("invalid_grant");
    const done = await runCommand(scene.box, ["auth", "remote", "--callback", flow.callback], pi.runtime);
    expect(done.exitCode).toBe(1);
    const log = pi.host.server("remote")!.log.text();
    expect(log).toMatch(/\[mcp-sdk\] OAuth "invalid_grant" — .*Cause: "rejected .*‹redacted›/);
    for (const secret of [flow.code, flow.verifier, CLIENT.client_secret]) expect(log).not.toContain(secret);
  });

  it("a live connection's refresh after a 401 logs the SDK's warning redacted (refresh token, client secret) and needs authorization", async () => {
    await sandbox();
    setBrowserOpener(async (url) => void (await scene.stack.browse(url, { deliver: true })));
    expect((await runCommand(scene.box, ["auth", "remote"])).exitCode).toBe(0);
    const pi = await scene.host();
    await pi.waitFor("remote", "connected");
    const file = JSON.parse(await readFile(scene.box.storePath, "utf8"));
    const refreshToken = file.servers.remote.tokens.tokens.refresh_token as string;
    // The access token stops working (revoked elsewhere): the next request gets a 401 and the SDK refreshes.
    file.servers.remote.tokens.tokens.access_token = "no-longer-valid-access-token";
    await writeFile(scene.box.storePath, JSON.stringify(file), { mode: 0o600 });
    scene.stack.echoTokenRequests("server_error");
    await pi.call("whoami").catch(() => undefined);
    await pi.waitFor("remote", "needs_auth");
    const log = pi.host.server("remote")!.log.text();
    expect(log).toContain("[mcp-sdk] Could not refresh OAuth tokens");
    expect(log).toContain(REDACTED);
    for (const secret of [refreshToken, CLIENT.client_secret]) expect(log).not.toContain(secret);
  });
});
