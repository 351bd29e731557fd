/**
 * Each host's fixture file (test/import/fixtures/, written from that host's
 * documentation) in its usual place, imported with `--dry-run --json`: the
 * exact definitions, field by field, and why the others are skipped.
 */
import { describe, expect, it } from "vitest";
import { useSandbox } from "../helpers/tmp.ts";
import { FIXTURES, definitionOf, importJson, placeAll, places, reasonsOf, trustProject } from "./helpers.ts";

const sandbox = useSandbox();

async function setUp() {
  const box = sandbox();
  await placeAll(box);
  await trustProject(box);
  return box;
}

describe("from Pi's built-in MCP (mcp.json)", () => {
  it("maps stdio fields: command, args and cwd (~ → ${HOME}), env ($NAME, escapes), timeout s → ms, enabled", async () => {
    const { document } = await importJson(await setUp(), ["--dry-run"]);
    expect(definitionOf(document, "filesystem")).toEqual({
      command: "npx",
      args: ["-y", "@modelcontextprotocol/server-filesystem", "${HOME}/notes"],
      environment: { FS_TOKEN: "${FS_TOKEN}", LEVEL: "${LOG_LEVEL}", PRICE: "$5 !" },
      cwd: "${HOME}/work",
      requestTimeoutMs: 90_000,
      enabled: false,
    });
    expect(document.imported.find((server) => server.name === "filesystem")).toMatchObject({
      scope: "global",
      notes: ["description: not imported: pi-mcp has no description setting"],
    });
  });

  it("maps remote fields: url, headers, type, OAuth client settings and the redirect", async () => {
    const { document } = await importJson(await setUp(), ["--dry-run"]);
    expect(definitionOf(document, "docs")).toEqual({ url: "https://example.com/mcp", headers: { Authorization: "Bearer ${DOCS_TOKEN}" } });
    expect(definitionOf(document, "sentry")).toEqual({
      url: "https://mcp.sentry.dev/mcp",
      auth: {
        type: "oauth",
        clientId: "my-client",
        clientSecret: "${SENTRY_SECRET}",
        scopes: ["org:read", "project:read"],
        redirectUri: "http://127.0.0.1:8765/callback",
      },
      requestTimeoutMs: 2_500,
    });
    // A callbackUrl without a port takes callbackPort's, as Pi does.
    expect(definitionOf(document, "callback")).toEqual({
      url: "https://mcp.example.com/mcp",
      auth: { type: "oauth", redirectUri: "http://localhost:9000/oauth/done" },
    });
    expect(definitionOf(document, "legacy")).toEqual({ url: "https://old.example.com/sse", transport: "sse" });
  });

  it("imports hidden tools as tools.exclude and reports every other exposure as not imported", async () => {
    const { document } = await importJson(await setUp(), ["--dry-run"]);
    expect(definitionOf(document, "github")).toEqual({
      url: "https://api.githubcopilot.com/mcp/",
      tools: { exclude: ["drop_repo", "delete_*{,/**/*}"] },
    });
    const notes = document.imported.find((server) => server.name === "github")!.notes;
    expect(notes).toContain(
      'exposure: "deferred" not imported: pi-mcp has no exposure setting and offers every tool to the model directly',
    );
    expect(notes).toContain("toolExposure: hidden tools imported as tools.exclude");
    expect(document.imported.find((server) => server.name === "docs")!.notes).toContain(
      'exposure: "direct" not imported: pi-mcp has no exposure setting and offers every tool to the model directly',
    );
    expect(reasonsOf(document, "ordered")).toEqual([expect.stringContaining("first-match order")]);
    expect(reasonsOf(document, "hidden-server")).toEqual([expect.stringMatching(/^exposure: is "hidden"/)]);
  });

  it("skips what pi-mcp cannot express, per field: !command, provider auth, client name, literal ${…}", async () => {
    const { document } = await importJson(await setUp(), ["--dry-run"]);
    expect(reasonsOf(document, "gh-cli")).toEqual([
      "env.GH_TOKEN: runs a shell command (!…) for its value; pi-mcp cannot run commands for values",
    ]);
    expect(reasonsOf(document, "provider")).toEqual(["auth: sends the token of one of Pi's /login providers; pi-mcp has no equivalent"]);
    expect(reasonsOf(document, "figma")).toEqual([
      "oauth.clientName: sets the client name sent at client registration; pi-mcp cannot set it",
    ]);
    expect(reasonsOf(document, "literal-arg")).toEqual(["args[1]: Pi takes ${…} here literally, but pi-mcp would substitute it"]);
    expect(JSON.stringify(document)).not.toContain("gh auth token");
  });

  it("reads the trusted project's .pi/mcp.json into project scope: a disabling override becomes a mask", async () => {
    const { document } = await importJson(await setUp(), ["--dry-run"]);
    expect(document.sources.map((source) => [source.scope, source.status])).toEqual([
      ["global", "read"],
      ["project", "read"],
    ]);
    expect(document.imported.filter((server) => server.scope === "project").map((server) => [server.name, server.definition])).toEqual([
      ["internal-tools", { enabled: false }],
      ["project-tool", { command: "node", args: ["./tools/mcp.mjs"], cwd: "." }],
    ]);
    expect(definitionOf(document, "internal-tools")).toEqual({ command: "internal-mcp", args: ["--serve"] });
    expect(reasonsOf(document, "docs")).toEqual([expect.stringContaining("changes only exposure")]);
    expect(reasonsOf(document, "orphan")).toEqual([expect.stringContaining("overrides no global server")]);
  });

  it("with -l writes everything to the project, the project entry winning as in Pi", async () => {
    const { document } = await importJson(await setUp(), ["--dry-run", "-l"]);
    expect(new Set(document.imported.map((server) => server.scope))).toEqual(new Set(["project"]));
    expect(definitionOf(document, "internal-tools")).toEqual({ command: "internal-mcp", args: ["--serve"], enabled: false });
    expect(reasonsOf(document, "internal-tools")).toEqual([
      expect.stringMatching(/^replaced by the definition in .*\.pi\/mcp\.json, as in Pi's built-in MCP$/),
    ]);
  });

  it("does not read the project's .pi/mcp.json when the project is not trusted", async () => {
    const box = sandbox();
    await placeAll(box);
    const { document } = await importJson(box, ["--dry-run"]);
    expect(document.sources).toEqual([
      { file: places(box).piGlobal, scope: "global", status: "read" },
      { file: places(box).piProject, scope: "project", status: "untrusted" },
    ]);
    expect(document.imported.every((server) => server.scope === "global")).toBe(true);
  });
});

describe("from Claude Code (.mcp.json)", () => {
  it("maps stdio, http, sse, headers and the OAuth client, into project scope", async () => {
    const { document } = await importJson(await setUp(), ["--from", "claude", "--dry-run"]);
    expect(document.imported.map((server) => [server.name, server.scope, server.definition])).toEqual([
      [
        "airtable",
        "project",
        { command: "npx", args: ["-y", "airtable-mcp-server"], environment: { AIRTABLE_API_KEY: "${AIRTABLE_API_KEY}" } },
      ],
      ["notion", "project", { url: "https://mcp.notion.com/mcp" }],
      ["asana", "project", { url: "https://mcp.asana.com/sse", headers: { "X-Workspace": "${ASANA_WORKSPACE}" }, transport: "sse" }],
      [
        "private-api",
        "project",
        {
          url: "https://api.company.com/mcp",
          auth: { type: "oauth", clientId: "pi-client", redirectUri: "http://localhost:8080/callback", scopes: ["read:all", "write:own"] },
        },
      ],
    ]);
    expect(document.imported.find((server) => server.name === "private-api")!.notes).toContain(
      "oauth: Claude Code keeps a client secret in the system keychain, not in the file: if this client has one, add auth.clientSecret",
    );
  });

  it("skips defaults, Claude's own variables, headersHelper and unknown transports", async () => {
    const { document } = await importJson(await setUp(), ["--from", "claude", "--dry-run"]);
    expect(reasonsOf(document, "with-default")).toEqual(["url: uses a default value (${NAME:-…}); pi-mcp has no default values"]);
    expect(reasonsOf(document, "plugin-db")).toEqual([
      "command: uses ${CLAUDE_PLUGIN_ROOT}, which Claude Code fills in itself; pi-mcp has no such variable",
    ]);
    expect(reasonsOf(document, "helper")).toEqual([
      "headersHelper: runs a command to produce headers; pi-mcp cannot run commands for values",
    ]);
    expect(reasonsOf(document, "websocket")).toEqual([expect.stringMatching(/^type: not a transport pi-mcp has/)]);
    expect(JSON.stringify(document)).not.toContain("https://api.example.com}");
  });
});

describe("from Cursor (~/.cursor/mcp.json, .cursor/mcp.json)", () => {
  it("reads both files (with comments and trailing commas), converting ${env:NAME} and the static OAuth client", async () => {
    const { document } = await importJson(await setUp(), ["--from", "cursor", "--dry-run"]);
    expect(document.imported.map((server) => [server.name, server.scope, server.definition])).toEqual([
      ["remote-sse", "global", { url: "http://localhost:8000/sse", transport: "sse" }],
      ["streamable", "global", { url: "https://stream.example.com/mcp" }],
      ["userjot", "project", { url: "https://api.userjot.com/v1/mcp", headers: { Authorization: "Bearer ${USERJOT_API_TOKEN}" } }],
      [
        "pipeshub",
        "project",
        {
          url: "https://pipes.example.com/mcp",
          auth: {
            type: "oauth",
            clientId: "${PIPES_CLIENT_ID}",
            clientSecret: "${PIPES_CLIENT_SECRET}",
            scopes: ["openid", "offline_access"],
          },
        },
      ],
      [
        "oci",
        "project",
        { command: "uvx", args: ["oracle.oci-api-mcp-server"], environment: { OCI_CONFIG_PROFILE: "DEFAULT", FASTMCP_LOG_LEVEL: "ERROR" } },
      ],
    ]);
    expect(reasonsOf(document, "workspace")).toEqual([
      "args[0]: uses ${workspaceFolder}, which Cursor fills in itself; pi-mcp has no such variable",
    ]);
    expect(reasonsOf(document, "dotenv")).toEqual([
      "envFile: loads variables from a file; pi-mcp cannot read env files (list them under env)",
    ]);
  });
});

describe("from VS Code (user mcp.json and settings, .vscode/mcp.json)", () => {
  it("reads servers (not inputs); the user mcp.json wins over older user settings", async () => {
    const { document } = await importJson(await setUp(), ["--from", "vscode", "--dry-run"]);
    expect(document.imported.map((server) => [server.name, server.scope, server.definition])).toEqual([
      ["github", "global", { url: "https://api.githubcopilot.com/mcp/" }],
      ["fetch", "global", { command: "uvx", args: ["mcp-server-fetch"] }],
      ["memory", "project", { command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"] }],
      ["context7", "project", { url: "https://mcp.context7.com/mcp", headers: { CONTEXT7_API_KEY: "${CONTEXT7_KEY}" } }],
      ["devserver", "project", { command: "node", args: ["build/index.js"], cwd: "/opt/dev" }],
      ["withOauth", "project", { url: "https://api.example.com/mcp", auth: { type: "oauth", clientId: "example-client-id" } }],
    ]);
    expect(reasonsOf(document, "github")).toEqual([
      expect.stringMatching(/^replaced by the definition in .*Code\/User\/mcp\.json, as in VS Code$/),
    ]);
    expect(document.imported.find((server) => server.name === "devserver")!.notes).toEqual([
      "dev: not imported: VS Code's development mode (watch and debug)",
    ]);
  });

  it("skips ${input:…}, the sandbox, predefined variables and non-HTTP URLs", async () => {
    const { document } = await importJson(await setUp(), ["--from", "vscode", "--dry-run"]);
    expect(reasonsOf(document, "perplexity")).toEqual([
      expect.stringMatching(/^env\.PERPLEXITY_API_KEY: uses an input variable \(\$\{input:…\}\)/),
    ]);
    expect(reasonsOf(document, "sandboxed")).toEqual([expect.stringMatching(/^sandboxEnabled: /)]);
    expect(reasonsOf(document, "folder")).toEqual([
      "args[0]: uses ${workspaceFolder}, which VS Code fills in itself; pi-mcp has no such variable",
    ]);
    expect(reasonsOf(document, "socket")).toEqual(["pi-mcp would reject the result: url: must be an absolute http:// or https:// URL"]);
  });
});

describe("from a file", () => {
  it("reads any mcpServers file with the fields hosts share; disabled, ${env:NAME}; unknown fields skip", async () => {
    const box = sandbox();
    const { document } = await importJson(box, ["--from", `${FIXTURES}desktop.json`, "--dry-run"]);
    expect(document.imported.map((server) => [server.name, server.scope, server.definition])).toEqual([
      [
        "desktop-fs",
        "global",
        {
          command: "npx",
          args: ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"],
          environment: { KEY: "${MY_KEY}", PLAIN: "${MY_PLAIN}" },
          enabled: false,
        },
      ],
      ["cline-one", "global", { command: "node", args: ["x.js"] }],
    ]);
    expect(reasonsOf(document, "with-timeout")).toEqual([expect.stringMatching(/^timeout: hosts disagree/)]);
    expect(reasonsOf(document, "unknown-field")).toEqual([expect.stringMatching(/^weird: a field pi-mcp does not know/)]);
    expect(reasonsOf(document, "bad name!")).toEqual([expect.stringMatching(/^name: pi-mcp server names are/)]);
  });

  it("reads a file in its host's dialect when its place names the host, and VS Code's servers shape anywhere", async () => {
    const box = sandbox();
    await box.writeText(`${box.root}/elsewhere/.mcp.json`, JSON.stringify({ mcpServers: { a: { type: "http", url: "${U:-http://x}" } } }));
    await box.writeText(
      `${box.root}/elsewhere/servers.json`,
      JSON.stringify({ servers: { b: { type: "stdio", command: "x", env: { K: "${input:k}" } }, c: { type: "stdio", command: "y" } } }),
    );
    const claude = await importJson(box, ["--from", `${box.root}/elsewhere/.mcp.json`, "--dry-run"]);
    expect(reasonsOf(claude.document, "a")).toEqual(["url: uses a default value (${NAME:-…}); pi-mcp has no default values"]);
    const vscode = await importJson(box, ["--from", "../elsewhere/servers.json", "--dry-run"]);
    expect(reasonsOf(vscode.document, "b")).toEqual([expect.stringContaining("VS Code asks for")]);
    expect(definitionOf(vscode.document, "c")).toEqual({ command: "y" });
  });
});
