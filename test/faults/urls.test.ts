// Hostile URLs: an authorization server (the real oidc-provider stack) whose
// metadata names a non-web `authorization_endpoint`, and a real server whose URL
// elicitation asks to open one. Only http and https are ever shown as links or
// handed to the opener; anything else is refused with an error naming the server.
// The opener is replaced by a recorder (the `open` package runs its own bundled
// xdg-open, so the decision is checked before it would be called).
import { readFile } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { createKernel } from "../../src/composition.ts";
import { setBrowserOpener } from "../../src/safety/browser.ts";
import { runCommand, useOAuthScene } from "../auth/helpers.ts";
import { fakeUi, person } from "../features/interactive-helpers.ts";
import { fixtureServer, startHost, stopAllHosts, textOf } from "../helpers/host.ts";

const HOSTILE_URLS = [
  "file:///etc/passwd",
  "javascript:alert(1)",
  "vscode://vscode.git/clone?url=https%3A%2F%2Fevil.example%2Frepo",
  "ms-settings:display",
  "x-pi-mcp-test-handler://run?cmd=calc",
  "data:text/html,<script>alert(1)</script>",
  "smb://evil.example/share",
];

/** The opener every test here uses: records what it was asked to open, opens nothing. */
const opened: string[] = [];
const recordOpening = () => setBrowserOpener(async (url) => void opened.push(url));

afterEach(async () => {
  opened.length = 0;
  setBrowserOpener(undefined);
  await stopAllHosts();
});

describe("auth against an authorization server with a non-web authorization endpoint", () => {
  const scene = useOAuthScene();

  it.each(HOSTILE_URLS)("refuses %s: nothing printed, stored or opened, and the error names the server", async (endpoint) => {
    await scene.sandbox((await scene.startStack({ authorizationEndpoint: endpoint })).mcpUrl);
    recordOpening();
    const result = await runCommand(scene.box, ["auth", "remote"]);
    expect(result.exitCode, result.output).toBe(1);
    // (The SDK's own metadata check already refuses javascript:, data: and vbscript: endpoints; pi-mcp refuses the rest.)
    expect(result.output).toMatch(
      /^auth remote: (MCP server "remote": its authorization server's authorization endpoint is a "[a-z-]+:" URL; only http and https URLs are shown or opened, so nothing was opened|the authorization server's metadata is not valid \(authorization_endpoint: URL cannot use javascript:, data:, or vbscript: scheme\); nothing was stored or opened)$/,
    );
    expect(opened).toEqual([]);
    const everything = [...result.progress, result.output].join("\n");
    expect(everything).not.toContain(endpoint.slice(endpoint.indexOf(":") + 1, endpoint.indexOf(":") + 12));
    expect(result.progress).toEqual([]);
    // No flow was left pending for a URL nobody may open.
    const store = await readFile(scene.box.storePath, "utf8").catch(() => "{}");
    expect(JSON.parse(store).servers?.remote?.pending).toBeUndefined();
  });

  it("refuses it with --no-open too: the URL is never printed for copying", async () => {
    await scene.sandbox((await scene.startStack({ authorizationEndpoint: "file:///etc/passwd" })).mcpUrl);
    recordOpening();
    const result = await runCommand(scene.box, ["auth", "remote", "--no-open"]);
    expect(result.exitCode, result.output).toBe(1);
    expect(result.output).toContain('MCP server "remote": its authorization server\'s authorization endpoint is a "file:" URL');
    expect(result.output).not.toContain("/etc/passwd");
    expect(opened).toEqual([]);
  });

  it("still prints and opens an https/http endpoint (the same flow, a web endpoint)", async () => {
    await scene.sandbox((await scene.startStack()).mcpUrl);
    recordOpening();
    const result = await runCommand(scene.box, ["auth", "remote", "--no-open"]);
    expect(result.exitCode, result.output).toBe(0);
    expect(result.output).toMatch(/http:\/\/127\.0\.0\.1:\d+\/auth\?/);
  });
});

describe("URL elicitation that asks to open a non-web URL", () => {
  it("is declined before any dialog, with a notice naming the server, through the production kernel's opener", async () => {
    recordOpening();
    const ui = fakeUi(person());
    ui.script((dialog) => dialog.method === "confirm");
    const h = await startHost(
      { asker: fixtureServer("interactive", { FIXTURE_ERA: "legacy" }) },
      { kernel: createKernel(), services: { ui } },
    );
    await h.waitForTools(1, { server: "asker" });
    for (const url of HOSTILE_URLS) {
      const outcome = JSON.parse(textOf(await h.call("mcp__asker__open_page", { url }, { interactive: true })));
      expect(outcome.action, url).toBe("decline");
    }
    expect(opened).toEqual([]);
    expect(ui.dialogs).toEqual([]);
    expect(ui.notices).toHaveLength(HOSTILE_URLS.length);
    for (const notice of ui.notices) {
      expect(notice).toMatch(
        /^MCP server "asker": the web page it asks you to open \(URL elicitation\) is (a "[a-z-]+:" URL|not a valid URL); only http and https URLs are shown or opened, so nothing was opened$/,
      );
    }
    // A web page is still offered and opened after a yes.
    const outcome = JSON.parse(
      textOf(await h.call("mcp__asker__open_page", { url: "https://login.example.com/start" }, { interactive: true })),
    );
    expect(outcome.action).toBe("accept");
    expect(opened).toEqual(["https://login.example.com/start"]);
  });
});
