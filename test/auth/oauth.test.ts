// OAuth through our host against a real authorization server (oidc-provider) in
// front of a real MCP server (test/auth/fixtures/oauth-stack.ts), all on 127.0.0.1.
import { readFile, stat, writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { setBrowserOpener } from "../../src/safety/browser.ts";
import { ConnectionPool } from "../../src/runtime/pool.ts";
import type { OAuthStackOptions } from "./fixtures/oauth-stack.ts";
import { accessTokenExpiry, authorizationUrlIn, cliProcess, runCommand, useOAuthScene } from "./helpers.ts";

const scene = useOAuthScene();

async function setup(options: OAuthStackOptions = {}, auth: Record<string, unknown> = { type: "oauth" }) {
  const stack = await scene.startStack(options);
  await scene.sandbox(stack.mcpUrl, (redirectUri) => ({ ...auth, ...(auth.type === "oauth" && { redirectUri }) }));
}

const host = (pool?: ConnectionPool) => scene.host(pool);

/** The browser: follows the authorization URL through login and consent to the loopback callback. */
function browserDelivers() {
  setBrowserOpener(async (url) => void (await scene.stack.browse(url, { deliver: true })));
}

async function stored(): Promise<any> {
  return JSON.parse(await readFile(scene.box.storePath, "utf8"));
}

/** Every value a command's output must never show. */
async function secretsOf(): Promise<string[]> {
  const entry = (await stored()).servers.remote;
  return [entry.tokens?.tokens.access_token, entry.tokens?.tokens.refresh_token, entry.pending?.codeVerifier].filter(Boolean);
}

describe("OAuth against a real authorization server", () => {
  it("a server needing authorization goes to needs_auth without any browser; /mcp auth runs discovery, DCR, PKCE and reconnects", async () => {
    await setup();
    const pi = await host();
    await pi.waitFor("remote", "needs_auth");
    expect(pi.cause("remote")).toContain("/mcp auth remote");
    // Explicit only: no registration and no authorization request happened in the background.
    expect(scene.stack.counters.registrations).toBe(0);
    expect(scene.stack.counters.authorizations).toBe(0);
    expect(pi.state("remote")).toBe("needs_auth"); // and it is not retried

    browserDelivers();
    const result = await runCommand(scene.box, ["auth", "remote"], pi.runtime);
    expect(result.exitCode, result.output).toBe(0);
    expect(result.progress[0]).toMatch(/^Authorize pi-mcp for "remote" in your browser:\n {2}http:\/\/127\.0\.0\.1:\d+\/auth\?/);
    expect(result.progress[0]).toContain("code_challenge_method=S256");
    expect(result.output).toContain('Reconnected "remote": connected');
    expect(scene.stack.counters).toMatchObject({ registrations: 1, authorizations: 1 });
    expect(scene.stack.counters.grants.authorization_code).toBe(1);
    expect(JSON.parse((await pi.call("whoami")).text)).toMatchObject({ sub: "test-user", scope: "mcp:tools" });

    // The store: 0600 in a 0700 folder, bound to the URL and the client identity, no flow left pending.
    expect((await stat(scene.box.storePath)).mode & 0o777).toBe(0o600);
    expect((await stat(scene.box.agentDir)).mode & 0o777).toBe(0o700);
    const entry = (await stored()).servers.remote;
    expect(entry).toMatchObject({ url: scene.stack.mcpUrl, client: `dynamic|${scene.box.redirectUri}` });
    expect(entry.pending).toBeUndefined();
    expect(entry.tokens.tokens.refresh_token).toBeTruthy();
    const everything = [...result.progress, result.output, pi.cause("remote") ?? ""].join("\n");
    for (const secret of await secretsOf()) expect(everything).not.toContain(secret);

    const list = await runCommand(scene.box, ["list", "--json"]);
    expect((list.json as any).servers[0]).toMatchObject({ name: "remote", auth: "oauth", storedAuth: true });
  });

  it("auth --no-open prints the URL and returns; auth --callback completes the flow; wrong state or redirect is refused", async () => {
    await setup();
    const first = await runCommand(scene.box, ["auth", "remote", "--no-open"]);
    expect(first.exitCode, first.output).toBe(0);
    expect(first.output).toContain("--callback");
    const url = authorizationUrlIn(first.output);
    expect((await stored()).servers.remote.pending).toBeTruthy();
    const callback = await scene.stack.browse(url); // the browser lands on a redirect nobody listens to
    expect(callback.startsWith(scene.box.redirectUri)).toBe(true);

    const forged = new URL(callback);
    forged.searchParams.set("state", "forged-state-value");
    const refused = await runCommand(scene.box, ["auth", "remote", "--callback", forged.href]);
    expect(refused.exitCode).toBe(1);
    expect(refused.output).toContain("state does not match");
    expect(refused.output).not.toContain(new URL(callback).searchParams.get("code")!);
    const elsewhere = new URL(callback);
    elsewhere.port = "1";
    expect((await runCommand(scene.box, ["auth", "remote", "--callback", elsewhere.href])).output).toContain(
      "not the loopback redirect URI",
    );
    expect((await stored()).servers.remote.tokens).toBeUndefined();

    const done = await runCommand(scene.box, ["auth", "remote", "--callback", callback]);
    expect(done.exitCode, done.output).toBe(0);
    expect(done.output).not.toContain(new URL(callback).searchParams.get("code")!);
    const pi = await host();
    await pi.waitFor("remote", "connected");
    expect((await pi.call("echo", { text: "hi" })).text).toBe("hi");
  });

  it("--code/--state completes, in a second process, a flow started by --no-open in another", async () => {
    await setup();
    const first = await cliProcess(scene.box, ["auth", "remote", "--no-open"]);
    expect(first.code, first.stderr).toBe(0);
    const callback = new URL(await scene.stack.browse(authorizationUrlIn(first.stdout)));
    const code = callback.searchParams.get("code")!;
    const state = callback.searchParams.get("state")!;
    const second = await cliProcess(scene.box, ["auth", "remote", "--code", code, "--state", state]);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain('Authorized "remote"');
    expect(second.stdout + second.stderr).not.toContain(code);
    const tested = await cliProcess(scene.box, ["test", "remote", "--json"]);
    expect(tested.code, tested.stdout + tested.stderr).toBe(0);
    expect(JSON.parse(tested.stdout).servers[0]).toMatchObject({ ok: true, tools: 2 });
  }, 60_000);

  it("refreshes before a known expiry and after a 401", async () => {
    await setup({ accessTokenTtlSeconds: 2 });
    browserDelivers();
    expect((await runCommand(scene.box, ["auth", "remote"])).exitCode).toBe(0);
    const pi = await host();
    await pi.waitFor("remote", "connected");
    const before = (await stored()).servers.remote.tokens.tokens;
    await accessTokenExpiry(scene.box.storePath);
    expect((await pi.call("echo", { text: "after expiry" })).text).toBe("after expiry");
    expect(scene.stack.counters.grants.refresh_token).toBe(1);
    const after = (await stored()).servers.remote.tokens.tokens;
    expect(after.access_token).not.toBe(before.access_token);
    expect(after.refresh_token).not.toBe(before.refresh_token); // rotated, and kept

    // A token the server rejects although its expiry is unknown: the 401 path refreshes.
    const file = await stored();
    file.servers.remote.tokens = {
      ...file.servers.remote.tokens,
      tokens: { ...after, access_token: "no-longer-accepted" },
      expiresAt: undefined,
    };
    await writeFile(scene.box.storePath, JSON.stringify(file));
    const again = await host();
    await again.waitFor("remote", "connected");
    expect(scene.stack.counters.grants.refresh_token).toBe(2);
    expect(scene.stack.counters.tokenErrors).toEqual({});
  });

  it("a revoked refresh token moves the server to needs_auth (at connect and in mid-session), without a browser", async () => {
    await setup({ accessTokenTtlSeconds: 2 });
    browserDelivers();
    expect((await runCommand(scene.box, ["auth", "remote"])).exitCode).toBe(0);
    setBrowserOpener(async () => {
      throw new Error("no browser may be opened");
    });
    const pi = await host();
    await pi.waitFor("remote", "connected");
    await scene.stack.revokeRefreshToken((await stored()).servers.remote.tokens.tokens.refresh_token);
    await accessTokenExpiry(scene.box.storePath);
    const call = await pi.call("echo", { text: "x" }).catch((error: Error) => ({ text: error.message, isError: true }));
    expect(call.isError).toBe(true);
    expect(call.text).toContain("/mcp auth remote");
    await pi.waitFor("remote", "needs_auth");
    const fresh = await host();
    await fresh.waitFor("remote", "needs_auth");
    expect(scene.stack.counters.authorizations).toBe(1); // only the explicit one
    expect((await stored()).servers.remote.tokens).toBeUndefined();
  });

  it("a retained connection is reused by the next session only while its stored credentials are unchanged", async () => {
    await setup();
    browserDelivers();
    expect((await runCommand(scene.box, ["auth", "remote"])).exitCode).toBe(0);
    const pool = new ConnectionPool();
    const first = await host(pool);
    await first.waitFor("remote", "connected");
    await first.host.shutdown(undefined, "replaced");
    const second = await host(pool);
    await second.waitFor("remote", "connected");
    expect(second.reusedAt("remote")).toBeTypeOf("number"); // same credentials: reused
    await second.host.shutdown(undefined, "replaced");
    // Logged out elsewhere (another terminal): the next session must not inherit the old client.
    expect((await runCommand(scene.box, ["logout", "remote"])).exitCode).toBe(0);
    const third = await host(pool);
    await third.waitFor("remote", "needs_auth");
    expect(third.reusedAt("remote")).toBeUndefined();
    // Authorized anew elsewhere: a fresh connection with the new tokens, not a retained one.
    expect((await runCommand(scene.box, ["auth", "remote"])).exitCode).toBe(0);
    await third.host.reconnect("remote");
    await third.waitFor("remote", "connected");
    await third.host.shutdown(undefined, "replaced");
    const fourth = await host(pool);
    await fourth.waitFor("remote", "connected");
    expect(fourth.reusedAt("remote")).toBeTypeOf("number"); // unchanged since the third session connected
    await pool.drain();
  });

  it("two processes refreshing at once share one rotation: the second uses the token the first obtained", async () => {
    await setup();
    browserDelivers();
    expect((await runCommand(scene.box, ["auth", "remote"])).exitCode).toBe(0);
    // Both processes see an access token that is about to expire.
    const file = await stored();
    file.servers.remote.tokens.expiresAt = Date.now() - 1_000;
    await writeFile(scene.box.storePath, JSON.stringify(file), { mode: 0o600 });
    const [a, b] = await Promise.all([cliProcess(scene.box, ["test", "remote"]), cliProcess(scene.box, ["test", "remote"])]);
    expect(a.code, a.stdout + a.stderr).toBe(0);
    expect(b.code, b.stdout + b.stderr).toBe(0);
    expect(scene.stack.counters.grants.refresh_token).toBe(1);
    expect(scene.stack.counters.tokenErrors).toEqual({});
    // The rotated refresh token was kept: another refresh still works.
    const later = await stored();
    later.servers.remote.tokens.expiresAt = Date.now() - 1_000;
    await writeFile(scene.box.storePath, JSON.stringify(later), { mode: 0o600 });
    const c = await cliProcess(scene.box, ["test", "remote"]);
    expect(c.code, c.stdout + c.stderr).toBe(0);
    expect(scene.stack.counters.grants.refresh_token).toBe(2);
    expect(scene.stack.counters.tokenErrors).toEqual({});
  }, 60_000);

  it("a malformed store is never overwritten by ordinary operations; logout --all --force resets it", async () => {
    await setup();
    const bytes = Buffer.from('{"version": 1, "servers": {"remote": tru');
    await writeFile(scene.box.storePath, bytes, { mode: 0o600 });
    const pi = await host();
    await pi.waitFor("remote", "needs_auth");
    expect(pi.cause("remote")).toContain("logout --all --force");
    for (const argv of [
      ["auth", "remote"],
      ["logout", "remote"],
      ["remove", "--logout", "remote"],
    ]) {
      const result = await runCommand(scene.box, argv);
      expect(result.exitCode, argv.join(" ")).toBe(1);
      expect(result.output).toContain("logout --all --force");
      // remove --logout removed the definition before the store refused: it says both.
      if (argv[0] === "remove") expect(result.output).toContain('Removed global server "remote"');
      if (argv[0] === "remove") expect(result.output).toContain("but not its stored credentials");
    }
    expect((await runCommand(scene.box, ["list"])).output).not.toMatch(/^remote\s/m);
    const list = await runCommand(scene.box, ["list", "--json"]);
    expect(list.exitCode).toBe(0);
    expect(Buffer.compare(await readFile(scene.box.storePath), bytes)).toBe(0);
    expect((await runCommand(scene.box, ["logout", "--all"])).exitCode).toBe(2);
    const reset = await runCommand(scene.box, ["logout", "--all", "--force"]);
    expect(reset.exitCode, reset.output).toBe(0);
    await expect(stat(scene.box.storePath)).rejects.toThrow();
  });
});
