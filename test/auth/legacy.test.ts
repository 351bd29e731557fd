// 2025-03-26 authorization discovery: a server without protected resource
// metadata whose authorization server lives on its own origin and names an
// issuer with a path. Accepted on that path only; every other issuer mismatch
// is still refused. A real authorization server (oidc-provider) for the flow,
// small HTTP fixtures for the refusals.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { readFile } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { IssuerMismatchError } from "@modelcontextprotocol/client";
import { setBrowserOpener } from "../../src/safety/browser.ts";
import { legacyDiscovery } from "../../plugins/auth-oauth/legacy.ts";
import { accessTokenExpiry, runCommand, useOAuthScene } from "./helpers.ts";

const scene = useOAuthScene();
let fixtures: Server[] = [];

afterEach(async () => {
  for (const server of fixtures) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  fixtures = [];
});

const host = () => scene.host();

async function storedEntry(): Promise<Record<string, any>> {
  return JSON.parse(await readFile(scene.box.storePath, "utf8")).servers.remote;
}

/**
 * An MCP server that always answers 401 and serves the given well-known
 * documents (anything else under /.well-known is 404), built from its own
 * origin: `documents(origin)`.
 */
async function challengingServer(documents: (origin: string) => Record<string, unknown>): Promise<string> {
  const server = createServer();
  fixtures.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const served = documents(origin);
  server.on("request", (req, res) => {
    const path = new URL(req.url ?? "/", origin).pathname;
    const document = served[path];
    if (document !== undefined) {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(document));
    } else if (path === "/mcp") {
      res.writeHead(401, { "content-type": "application/json", "www-authenticate": 'Bearer realm="mcp"' }).end('{"error":"invalid_token"}');
    } else {
      res.writeHead(404).end("not found");
    }
  });
  return `${origin}/mcp`;
}

function metadata(origin: string, issuer: string): Record<string, unknown> {
  return {
    issuer,
    authorization_endpoint: `${origin}/oauth/authorize`,
    token_endpoint: `${origin}/oauth/token`,
    registration_endpoint: `${origin}/oauth/register`,
    response_types_supported: ["code"],
    code_challenge_methods_supported: ["S256"],
  };
}

describe("a 2025-03-26 server (no protected resource metadata, issuer with a path on its own origin)", () => {
  it("waits in needs_auth, is authorized by `auth`, and later connections and refreshes use the accepted discovery", async () => {
    const stack = await scene.startStack({ legacy: true, accessTokenTtlSeconds: 2 });
    const mcpUrl = stack.mcpUrl;
    const box = await scene.sandbox(mcpUrl);
    const origin = new URL(mcpUrl).origin;

    const first = await host();
    await first.waitFor("remote", ["needs_auth", "failed"]);
    expect(first.state("remote"), first.cause("remote")).toBe("needs_auth");

    setBrowserOpener((url) => stack.browse(url, { deliver: true }).then(() => undefined));
    const result = await runCommand(box, ["auth", "remote"], first.runtime);
    expect(result.exitCode, result.output + result.progress.join("\n")).toBe(0);
    expect(result.progress.join("\n")).toContain(
      `the authorization server at ${origin} names issuer ${origin}/oauth; accepted because it is on the MCP server's own origin`,
    );
    const entry = await storedEntry();
    expect(entry.discovery).toMatchObject({
      authorizationServerUrl: `${origin}/`,
      legacyIssuer: true,
      authorizationServerMetadata: { issuer: `${origin}/oauth` },
    });

    await first.waitFor("remote", "connected");
    expect(JSON.parse((await first.call("whoami")).text)).toMatchObject({ sub: "test-user" });

    // A second host (another Pi) connects with the stored tokens; after expiry the refresh uses the accepted metadata.
    await first.stop();
    const second = await host();
    await second.waitFor("remote", "connected");
    await accessTokenExpiry(box.storePath);
    const after = await second.call("whoami");
    expect(after.isError, after.text).toBe(false);
    expect(stack.counters.grants.refresh_token ?? 0).toBeGreaterThanOrEqual(1);
    expect(stack.counters.tokenErrors).toEqual({});
  });
});

describe("issuer mismatches that stay refused", () => {
  it("an issuer on another origin: `auth` fails without storing anything, a connection fails", async () => {
    const mcpUrl = await challengingServer((origin) => ({
      "/.well-known/oauth-authorization-server": metadata(origin, "http://localhost:1/oauth"),
    }));
    const box = await scene.sandbox(mcpUrl);
    setBrowserOpener(async () => {
      throw new Error("no browser may be opened");
    });
    const result = await runCommand(box, ["auth", "remote", "--no-open"]);
    expect(result.exitCode).not.toBe(0);
    expect(result.output).toContain(
      "the authorization server's metadata names a different issuer than the one it was discovered at; nothing was stored",
    );
    const stored = await readFile(box.storePath, "utf8").then(
      (text) => JSON.parse(text).servers.remote,
      () => undefined,
    );
    expect(stored?.tokens).toBeUndefined();
    expect(stored?.pending).toBeUndefined();

    const running = await host();
    await running.waitFor("remote", ["needs_auth", "failed"]);
    expect(running.state("remote")).toBe("failed");
    expect(running.cause("remote")).toMatch(/Issuer mismatch/);
  });

  it("protected resource metadata that names the authorization server keeps the strict check", async () => {
    const mcpUrl = await challengingServer((origin) => ({
      "/.well-known/oauth-protected-resource/mcp": { resource: `${origin}/mcp`, authorization_servers: [origin] },
      "/.well-known/oauth-authorization-server": metadata(origin, `${origin}/oauth`),
    }));
    const box = await scene.sandbox(mcpUrl);
    const result = await runCommand(box, ["auth", "remote", "--no-open"]);
    expect(result.exitCode).not.toBe(0);
    expect(result.output).toContain("names a different issuer");
  });

  it("legacyDiscovery accepts only a metadata issuer mismatch found at the server's origin", async () => {
    const mcpUrl = await challengingServer((origin) => ({
      "/.well-known/oauth-authorization-server": metadata(origin, `${origin}/oauth`),
    }));
    const origin = new URL(mcpUrl).origin;
    const mismatch = new IssuerMismatchError("metadata", `${origin}/`, `${origin}/oauth`);
    expect(await legacyDiscovery(mcpUrl, mismatch, fetch)).toMatchObject({ authorizationServerUrl: `${origin}/`, legacyIssuer: true });
    // The callback's `iss` (RFC 9207), another error, a different expected issuer, or an issuer the metadata does not name.
    expect(
      await legacyDiscovery(mcpUrl, new IssuerMismatchError("authorization_response", `${origin}/oauth`, `${origin}/other`), fetch),
    ).toBeUndefined();
    expect(await legacyDiscovery(mcpUrl, new Error("Issuer mismatch"), fetch)).toBeUndefined();
    expect(
      await legacyDiscovery(mcpUrl, new IssuerMismatchError("metadata", "http://127.0.0.1:1/", `${origin}/oauth`), fetch),
    ).toBeUndefined();
    expect(await legacyDiscovery(mcpUrl, new IssuerMismatchError("metadata", `${origin}/`, `${origin}/elsewhere`), fetch)).toBeUndefined();
    expect(await legacyDiscovery(mcpUrl, new IssuerMismatchError("metadata", `${origin}/`, `${origin}/oauth?x=1`), fetch)).toBeUndefined();
  });
});
