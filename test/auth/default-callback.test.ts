// The default OAuth callback, http://127.0.0.1:19876/mcp/oauth/callback (README: "a definition without
// auth.redirectUri"), against a real authorization server (oidc-provider) in front of a real MCP server.
// Every other OAuth test names a free port of its own; these use the default itself.
import { createServer } from "node:net";
import { readFile } from "node:fs/promises";
import { expect, it } from "vitest";
import { setBrowserOpener } from "../../src/safety/browser.ts";
import { eventually } from "../helpers/wait.ts";
import { authorizationUrlIn, runCommand, useOAuthScene } from "./helpers.ts";

const DEFAULT_CALLBACK = "http://127.0.0.1:19876/mcp/oauth/callback";
const scene = useOAuthScene();

/** Whether 127.0.0.1:19876 can be bound now (another test run on this machine may hold it for a moment). */
function portFree(): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen(19876, "127.0.0.1", () => probe.close(() => resolve(true)));
  });
}

async function storedEntry(): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(scene.box.storePath, "utf8")).servers.remote;
}

it("a definition without redirectUri registers and sends http://127.0.0.1:19876/mcp/oauth/callback, and --callback takes it", async () => {
  const stack = await scene.startStack();
  await scene.sandbox(stack.mcpUrl, () => ({ type: "oauth" }));
  const started = await runCommand(scene.box, ["auth", "remote", "--no-open"]);
  expect(started.exitCode, started.output).toBe(0);
  const url = new URL(authorizationUrlIn(started.output));
  expect(url.searchParams.get("redirect_uri")).toBe(DEFAULT_CALLBACK);
  expect(await storedEntry()).toMatchObject({ client: `dynamic|${DEFAULT_CALLBACK}` });
  const callback = await stack.browse(url.href); // the authorization server sends the browser there
  expect(callback.startsWith(`${DEFAULT_CALLBACK}?`)).toBe(true);
  const done = await runCommand(scene.box, ["auth", "remote", "--callback", callback]);
  expect(done.exitCode, done.output).toBe(0);
  expect(await storedEntry()).toMatchObject({ tokens: { tokens: { token_type: expect.stringMatching(/bearer/i) } } });
});

it("without --no-open, auth waits for the browser on 127.0.0.1:19876 at /mcp/oauth/callback", async () => {
  const stack = await scene.startStack();
  await scene.sandbox(stack.mcpUrl, () => ({ type: "oauth" }));
  await eventually(portFree, 30_000, () => "127.0.0.1:19876 stayed in use");
  let delivered: string | undefined;
  setBrowserOpener(async (authorizationUrl) => {
    delivered = await stack.browse(authorizationUrl, { deliver: true });
  });
  const result = await runCommand(scene.box, ["auth", "remote"]);
  expect(result.exitCode, result.output).toBe(0);
  expect(delivered?.startsWith(`${DEFAULT_CALLBACK}?`)).toBe(true);
  expect(stack.counters.grants.authorization_code).toBe(1);
});
