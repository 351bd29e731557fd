/**
 * The auth-bearer plugin in-process (fixture servers over the SDK's in-memory
 * transport pair, remote definitions included): a remote server whose `auth`
 * is `{type: "bearer", token}` has its transport handed `Authorization:
 * Bearer <token>`, the token as the settings expand it, for every connection;
 * it answers for no other server; and it never has to compete with a
 * configured Authorization header, which settings with bearer auth refuse.
 */
import { afterEach, expect, it } from "vitest";
import { BearerAuthPlugin } from "../../plugins/auth-bearer/index.ts";
import { pluginHost, remoteFixture, stopAllHosts } from "./harness.ts";

afterEach(stopAllHosts);

it("hands every connection's transport Authorization: Bearer <token>, the token as the settings expand it", async () => {
  const h = await pluginHost(
    [new BearerAuthPlugin()],
    { docs: remoteFixture({ headers: { "X-Workspace": "w1" }, auth: { type: "bearer", token: "${DOCS_TOKEN}" } }) },
    { env: { DOCS_TOKEN: "t0ken-value" } },
  );
  await h.waitForState("docs", "connected");
  await h.host.reconnect("docs");
  await h.waitForState("docs", "connected");
  const docs = h.server("docs");
  expect(docs.transports.map((context) => context.auth)).toEqual([
    { headers: { Authorization: "Bearer t0ken-value" } },
    { headers: { Authorization: "Bearer t0ken-value" } },
  ]);
  // The configured headers stay the definition's: the transport adds the plugin's to them.
  expect(docs.transports[0]!.server.definition).toMatchObject({ headers: { "X-Workspace": "w1" } });
});

it("answers for no other server: local ones and remote ones whose auth is oauth, none or omitted get nothing from it", async () => {
  const h = await pluginHost([new BearerAuthPlugin()], {
    local: { build: () => {} },
    oauth: remoteFixture({ auth: { type: "oauth" } }),
    none: remoteFixture({ auth: { type: "none" } }),
    omitted: remoteFixture(),
  });
  for (const name of ["local", "oauth", "none", "omitted"]) {
    await h.waitForState(name, "connected");
    expect(h.server(name).transports.map((context) => context.auth)).toEqual([undefined]);
  }
});

it("never meets a configured Authorization header: settings that combine one with bearer auth are refused before a host starts", async () => {
  const both = remoteFixture({ headers: { authorization: "Basic dXNlcjpwdw==" }, auth: { type: "bearer", token: "t0ken-value" } });
  await expect(pluginHost([new BearerAuthPlugin()], { docs: both })).rejects.toThrow(
    "mcp.servers.docs.auth: bearer authentication cannot be combined with a configured Authorization header",
  );
});
