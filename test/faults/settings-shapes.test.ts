// Hostile and wrong-shaped settings files, read and written by the real command
// core on real files (and once by the pi-mcp CLI as its own process): `list`
// shows nothing that could drive a terminal and `list --json` only documented
// values; valid JSON of the wrong shape is never silently replaced by a mutation.
import { LIST_JSON_SERVER_KEYS } from "../helpers/package.ts";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makePiHome, runPi } from "../e2e/harness/pi.ts";
import { REPO_ROOT, nodeBinary, runCli, runProcess, useSandbox } from "../helpers/tmp.ts";

const sandbox = useSandbox();
// eslint-disable-next-line no-control-regex
const TERMINAL_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe("list", () => {
  it("strips terminal controls from every field it prints, and --json reports only documented values", async () => {
    const box = sandbox();
    await box.writeJson(box.globalSettings, {
      mcp: {
        exposure: "\u001b[2J\u001b[Hwiped",
        roots: ["/srv/\u001b]0;pwned\u0007data"],
        servers: {
          "evil\u001b]0;pwned\u0007name": { command: "node" },
          "bad-auth": { url: "https://mcp.example.com/mcp", auth: { type: "basic\u001b[31m\u009b2J", token: "x" } },
          "odd-transport": { url: "https://mcp.example.com/\u009b31mmcp", transport: "websocket\u001b[5m" },
          plain: { command: "node", roots: ["/home/\u001b[31mred"] },
        },
      },
    });
    const text = await runCli(["list"], box.projectDir, box.env());
    expect(text.exitCode).toBe(0);
    expect(text.output).toContain("evil");
    expect(text.output).toContain("bad-auth");
    expect(text.output).not.toMatch(TERMINAL_CONTROL);

    const json = await runCli(["list", "--json"], box.projectDir, box.env());
    const document = json.json as { valid: boolean; errors: { path: string; message: string }[]; servers: Record<string, unknown>[] };
    expect(document.valid).toBe(false);
    expect(document.servers).toHaveLength(4);
    for (const server of document.servers) {
      expect(["global", "project"]).toContain(server.scope);
      expect(["stdio", "http", "sse"]).toContain(server.transport);
      expect(["none", "bearer", "oauth", "oauth-on-demand"]).toContain(server.auth);
      expect(["auto", "direct", "deferred", "codemode", "hidden"]).toContain(server.exposure);
      expect(typeof server.enabled).toBe("boolean");
      expect(typeof server.masked).toBe("boolean");
      expect(typeof server.storedAuth).toBe("boolean");
      expect(server.definitionTokens === null || Number.isInteger(server.definitionTokens)).toBe(true);
      expect(Object.keys(server).sort()).toEqual(LIST_JSON_SERVER_KEYS);
    }
    for (const error of document.errors) expect(error.message).not.toMatch(TERMINAL_CONTROL);
  });
});

describe("/mcp status in a real Pi", () => {
  it("shows invalid settings without the terminal controls their messages quote", async () => {
    const home = await makePiHome();
    try {
      await writeFile(
        join(home.agentDir, "settings.json"),
        JSON.stringify({
          mcp: {
            exposure: "\u001b]0;pwned\u0007",
            servers: { bad: { url: "https://mcp.example.com/mcp", auth: { type: "basic\u009b2J\u009dpwned\u0085", token: "x" } } },
          },
        }),
      );
      const run = await runPi({
        home: home.home,
        cwd: home.cwd,
        extensions: [REPO_ROOT],
        faux: false,
        args: ["-p", "/mcp status"],
        timeoutMs: 60_000,
      });
      expect(run.stdout).toContain("MCP is disabled: the settings are invalid.");
      expect(run.stdout).toContain("mcp.servers.bad.auth");
      expect(run.stdout).not.toMatch(TERMINAL_CONTROL);
    } finally {
      await home.cleanup();
    }
  }, 90_000);
});

/** Files whose `mcp` (or `mcp.servers`) is valid JSON of another shape, and the path each error must name. */
const WRONG_SHAPES: { name: string; text: string; path: string; is: string }[] = [
  { name: "mcp is a string", text: '{ "theme": "dark", "mcp": "notes about my servers" }\n', path: "mcp", is: "a string" },
  { name: "mcp is an array", text: '{ "mcp": [{ "url": "https://mcp.example.com/mcp" }] }\n', path: "mcp", is: "an array" },
  { name: "mcp is null", text: '{ "mcp": null }\n', path: "mcp", is: "null" },
  { name: "mcp is a number", text: '{ "mcp": 42 }\n', path: "mcp", is: "a number" },
  {
    name: "servers is an array",
    text: '{ "mcp": { "servers": [{ "name": "docs", "url": "https://mcp.example.com/mcp" }] } }\n',
    path: "mcp.servers",
    is: "an array",
  },
  {
    name: "servers is a string",
    text: '{ "mcp": { "requestTimeoutMs": 5000, "servers": "docs" } }\n',
    path: "mcp.servers",
    is: "a string",
  },
];

/** Every mutation, each aimed at a server the file might hold. */
const MUTATIONS: { name: string; argv: (box: { root: string }) => string[] }[] = [
  { name: "add (remote)", argv: () => ["add", "docs", "https://mcp.example.com/mcp"] },
  { name: "add (local)", argv: () => ["add", "docs", "--", "node", "server.mjs"] },
  { name: "enable", argv: () => ["enable", "docs"] },
  { name: "disable", argv: () => ["disable", "docs"] },
  { name: "remove", argv: () => ["remove", "docs"] },
  { name: "import", argv: (box) => ["import", "--from", join(box.root, "other-host.json")] },
];

describe("mutations on valid JSON of the wrong shape", () => {
  it.each(WRONG_SHAPES)(
    "$name: every mutation refuses with a path-qualified error and leaves the file byte for byte",
    async ({ text, path, is }) => {
      const box = sandbox();
      await box.writeText(box.globalSettings, text);
      await writeFile(join(box.root, "other-host.json"), JSON.stringify({ mcpServers: { docs: { url: "https://mcp.example.com/mcp" } } }));
      for (const mutation of MUTATIONS) {
        const result = await runCli(mutation.argv(box), box.projectDir, box.env());
        expect(result.exitCode, `${mutation.name}: ${result.output}`).toBe(1);
        expect(result.output, mutation.name).toBe(`${box.globalSettings}: ${path}: must be an object (is ${is}); nothing was changed`);
        expect(await box.readText(box.globalSettings), mutation.name).toBe(text);
      }
    },
  );

  it('the pi-mcp program (its own process) refuses `add` over "mcp": "notes" with exit code 1 and keeps the file', async () => {
    const box = sandbox();
    const text = '{ "theme": "dark", "mcp": "notes about my servers" }\n';
    await box.writeText(box.globalSettings, text);
    const result = await runProcess(
      nodeBinary(),
      ["--experimental-transform-types", "--no-warnings", join(REPO_ROOT, "cli/index.ts"), "add", "docs", "https://mcp.example.com/mcp"],
      {
        cwd: box.projectDir,
        env: box.env(),
        timeoutMs: 30_000,
      },
    );
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(`${box.globalSettings}: mcp: must be an object (is a string); nothing was changed`);
    expect(await box.readText(box.globalSettings)).toBe(text);
  });
});
