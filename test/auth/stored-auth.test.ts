// `list` reports stored credentials only when a connection would use them: an
// entry bound to the server's current URL and client identity. Same real
// stack as oauth.test.ts (oidc-provider in front of a real MCP server).
import { readFile } from "node:fs/promises";
import { expect, it } from "vitest";
import { setBrowserOpener } from "../../plugins/auth-oauth/flow.ts";
import type { ListDocument } from "../../src/commands/list.ts";
import { runCommand, useOAuthScene } from "./helpers.ts";

const scene = useOAuthScene();

/** `remote` as `list --json` and the table show it, with `definition` as its settings. */
/** The cell of `column` in `row` of the `list` table (columns start where their header does). */
function cell(table: string, row: string, column: string): string {
  const header = table.split("\n").find((line) => line.startsWith("NAME"))!;
  const start = header.indexOf(column);
  const next = header.slice(start + column.length).search(/\S/);
  return row.slice(start, next === -1 ? undefined : start + column.length + next).trim();
}

async function listedWith(definition: Record<string, unknown>): Promise<{ storedAuth: boolean; shown: string }> {
  await scene.box.writeJson(scene.box.globalSettings, { mcp: { retry: { maxRetries: 0 }, servers: { remote: definition } } });
  const json = (await runCommand(scene.box, ["list", "--json"])).json as ListDocument;
  const table = (await runCommand(scene.box, ["list"])).output;
  const row = table.split("\n").find((line) => line.startsWith("remote"))!;
  return { storedAuth: json.servers.find((server) => server.name === "remote")!.storedAuth, shown: cell(table, row, "STORED AUTH") };
}

it("storedAuth is true only for credentials bound to the server's current URL and client identity, as a connection would use them", async () => {
  const stack = await scene.startStack();
  await scene.sandbox(stack.mcpUrl);
  const redirectUri = scene.box.redirectUri;
  const authorized = { url: stack.mcpUrl, auth: { type: "oauth", redirectUri } };
  setBrowserOpener(async (url) => void (await stack.browse(url, { deliver: true })));
  expect((await runCommand(scene.box, ["auth", "remote"])).exitCode).toBe(0);

  const current = await listedWith(authorized);
  expect(current.storedAuth).toBe(true);
  expect(current.shown).toBe("yes");
  // The credentials the list says are there are the ones a connection uses.
  const pi = await scene.host();
  await pi.waitFor("remote", "connected");
  await pi.stop();

  const elsewhere = new URL(stack.mcpUrl);
  elsewhere.pathname = "/other-mcp";
  const stale: Record<string, Record<string, unknown>> = {
    "another URL": { ...authorized, url: elsewhere.href },
    "the same URL with a query": { ...authorized, url: `${stack.mcpUrl}?tenant=2` },
    "a configured client id": { url: stack.mcpUrl, auth: { type: "oauth", clientId: "another-client", redirectUri } },
    "another redirect URI": {
      url: stack.mcpUrl,
      auth: { type: "oauth", redirectUri: redirectUri.replace("/mcp/oauth/callback", "/elsewhere/callback") },
    },
    "bearer authentication": { url: stack.mcpUrl, auth: { type: "bearer", token: "not-the-oauth-token" } },
    'auth {"type": "none"}': { url: stack.mcpUrl, auth: { type: "none" } },
  };
  for (const [change, definition] of Object.entries(stale)) {
    const listed = await listedWith(definition);
    expect(listed.storedAuth, change).toBe(false);
    expect(listed.shown, change).toBe("no");
  }
  // Nothing was deleted: back on the URL and client it is bound to, the entry counts again.
  expect((await listedWith(authorized)).storedAuth).toBe(true);
});

it("a connection under another client identity needs authorization and leaves the stored credentials of the old one intact", async () => {
  const stack = await scene.startStack();
  await scene.sandbox(stack.mcpUrl);
  const authorized = { url: stack.mcpUrl, auth: { type: "oauth", redirectUri: scene.box.redirectUri } };
  setBrowserOpener(async (url) => void (await stack.browse(url, { deliver: true })));
  expect((await runCommand(scene.box, ["auth", "remote"])).exitCode).toBe(0);
  const before = await readFile(scene.box.storePath, "utf8");

  await listedWith({ url: stack.mcpUrl, auth: { type: "oauth", clientId: "another-client", redirectUri: scene.box.redirectUri } });
  const other = await scene.host();
  await other.waitFor("remote", "needs_auth");
  await other.stop();
  expect(stack.counters.grants.refresh_token ?? 0).toBe(0);
  // The refused connection wrote nothing over the entry of the other identity (not even the scope it would ask for).
  expect(await readFile(scene.box.storePath, "utf8")).toBe(before);

  expect((await listedWith(authorized)).storedAuth).toBe(true);
  const pi = await scene.host();
  await pi.waitFor("remote", "connected");
  expect(JSON.parse((await pi.call("whoami")).text)).toMatchObject({ sub: "test-user" });
});
