/**
 * "Defaults, merge, masks, and environment values": defaults, field-by-field
 * merge of timeouts and retry, whole-definition replacement, masks, untrusted
 * projects, and `${NAME}` expansion, all read from real settings files.
 */
import { describe, expect, it } from "vitest";
import type { ListDocument } from "../../src/commands/list.ts";
import { loadConfig } from "../../src/config/load.ts";
import { agentDir } from "../../src/config/paths.ts";
import type { EffectiveConfig } from "../../src/kernel/settings.ts";
import { runCli, useSandbox } from "../helpers/tmp.ts";

const sandbox = useSandbox();

async function write(globalMcp: unknown, projectMcp?: unknown): Promise<void> {
  const box = sandbox();
  if (globalMcp !== undefined) await box.writeJson(box.globalSettings, { mcp: globalMcp });
  if (projectMcp !== undefined) await box.writeJson(box.projectSettings, { mcp: projectMcp });
}

async function load(options: { trusted?: boolean; env?: Record<string, string> } = {}): Promise<EffectiveConfig> {
  const box = sandbox();
  const env = box.env(options.env);
  return loadConfig({ agentDir: agentDir(env), cwd: box.projectDir, projectTrusted: options.trusted ?? true, env });
}

/** Runs a CLI command line through the shared core (project trust comes from trust.json). */
async function cli(...argv: string[]) {
  const box = sandbox();
  return runCli(argv, box.projectDir, box.env());
}

async function listJson(): Promise<ListDocument> {
  const result = await cli("list", "--json");
  expect(result.exitCode).toBe(0);
  return result.json as ListDocument;
}

describe("defaults", () => {
  it("uses 10000 / 60000 ms timeouts and retry 2 / 1000 / 30000 / 1.5 when nothing is set", async () => {
    const config = await load();
    expect(config.valid).toBe(true);
    expect(config.servers).toEqual([]);
    expect(config.connectTimeoutMs).toBe(10_000);
    expect(config.requestTimeoutMs).toBe(60_000);
    expect(config.retry).toEqual({ maxRetries: 2, initialDelayMs: 1_000, maxDelayMs: 30_000, backoffFactor: 1.5 });
  });

  it("uses the defaults when settings.json exists without an mcp key", async () => {
    const box = sandbox();
    await box.writeJson(box.globalSettings, { theme: "dark" });
    const config = await load();
    expect(config.valid).toBe(true);
    expect(config.connectTimeoutMs).toBe(10_000);
  });
});

describe("top-level timeouts and retry merge field by field", () => {
  it("takes each field from project, else global, else the default", async () => {
    await write(
      { connectTimeoutMs: 1_111, requestTimeoutMs: 2_222, retry: { maxRetries: 5, initialDelayMs: 200 } },
      { requestTimeoutMs: 3_333, retry: { initialDelayMs: 300, backoffFactor: 2 } },
    );
    const config = await load();
    expect(config.valid).toBe(true);
    expect(config.connectTimeoutMs).toBe(1_111); // global
    expect(config.requestTimeoutMs).toBe(3_333); // project over global
    expect(config.retry).toEqual({
      maxRetries: 5, // global
      initialDelayMs: 300, // project over global
      maxDelayMs: 30_000, // default
      backoffFactor: 2, // project over default
    });
  });

  it("ignores the project's values when the project is not trusted", async () => {
    await write({ connectTimeoutMs: 1_111 }, { connectTimeoutMs: 9_999, retry: { maxRetries: 7 } });
    const config = await load({ trusted: false });
    expect(config.connectTimeoutMs).toBe(1_111);
    expect(config.retry.maxRetries).toBe(2);
  });
});

describe("server definitions", () => {
  it("a project definition replaces the global one whole, without merging fields", async () => {
    await write(
      {
        servers: {
          docs: {
            url: "https://global.example.com/mcp",
            headers: { "X-Workspace": "global" },
            auth: { type: "bearer", token: "global-token" },
            requestTimeoutMs: 5_000,
          },
        },
      },
      { servers: { docs: { url: "https://project.example.com/mcp" } } },
    );
    const config = await load();
    expect(config.valid).toBe(true);
    expect(config.servers).toHaveLength(1);
    const [docs] = config.servers;
    expect(docs).toMatchObject({ name: "docs", scope: "project", enabled: true, masked: false, auth: "none" });
    expect(docs!.definition).toEqual({ enabled: true, transport: "http", url: "https://project.example.com/mcp", headers: {} });
  });

  it("a project definition can turn a global remote server into a local one", async () => {
    await write(
      { servers: { docs: { url: "https://global.example.com/mcp" } } },
      { servers: { docs: { command: "node", args: ["d.mjs"] } } },
    );
    const config = await load();
    expect(config.servers[0]).toMatchObject({ scope: "project", transport: "stdio" });
  });

  it("lists servers of both scopes sorted by name with their provenance", async () => {
    await write({ servers: { zeta: { command: "z" }, alpha: { command: "a" } } }, { servers: { mid: { url: "https://m.example.com" } } });
    const config = await load();
    expect(config.servers.map((server) => [server.name, server.scope])).toEqual([
      ["alpha", "global"],
      ["mid", "project"],
      ["zeta", "global"],
    ]);
  });
});

describe("masks", () => {
  it("a project null masks the global definition (masked, disabled, scope global)", async () => {
    await write({ servers: { docs: { url: "https://global.example.com/mcp", auth: { type: "oauth" } } } }, { servers: { docs: null } });
    const config = await load();
    expect(config.valid).toBe(true);
    const box = sandbox();
    expect(config.servers).toEqual([
      {
        name: "docs",
        scope: "global",
        enabled: false,
        masked: true,
        transport: "http",
        auth: "oauth",
        file: box.globalSettings,
        written: { url: "https://global.example.com/mcp", auth: { type: "oauth" } },
      },
    ]);
  });

  it('a project { "enabled": false } masks the inherited global definition', async () => {
    await write({ servers: { docs: { command: "node", args: ["x"] } } }, { servers: { docs: { enabled: false } } });
    const config = await load();
    expect(config.valid).toBe(true);
    expect(config.servers[0]).toMatchObject({ name: "docs", scope: "global", enabled: false, masked: true, transport: "stdio" });
    expect(config.servers[0]!.definition).toBeUndefined();
  });

  it("list shows a masked server as masked, disabled, with scope global", async () => {
    const box = sandbox();
    await box.trust({ [box.projectDir]: true });
    await write({ servers: { docs: { url: "https://global.example.com/mcp" } } }, { servers: { docs: null } });
    const document = await listJson();
    expect(document.servers).toEqual([
      {
        name: "docs",
        scope: "global",
        enabled: false,
        masked: true,
        transport: "http",
        auth: "oauth-on-demand",
        storedAuth: false,
        exposure: "auto",
        definitionTokens: null,
      },
    ]);
    const text = await cli("list");
    expect(text.output).toMatch(/docs\s+global\s+masked\s+http/);
  });

  it("a masked global definition with a missing variable does not invalidate the configuration", async () => {
    await write({ servers: { docs: { url: "${PI_MCP_TEST_UNSET}" } } }, { servers: { docs: null } });
    const config = await load();
    expect(config.valid).toBe(true);
    expect(config.issues).toEqual([]);
  });

  it("removing the project entry (remove -l) reveals the global definition again", async () => {
    const box = sandbox();
    await box.trust({ [box.projectDir]: true });
    await write({ servers: { docs: { url: "https://global.example.com/mcp" } } }, { servers: { docs: null } });
    expect((await listJson()).servers[0]).toMatchObject({ masked: true, enabled: false });
    const removed = await cli("remove", "-l", "docs");
    expect(removed.exitCode).toBe(0);
    expect((await listJson()).servers).toEqual([
      {
        name: "docs",
        scope: "global",
        enabled: true,
        masked: false,
        transport: "http",
        auth: "oauth-on-demand",
        storedAuth: false,
        exposure: "auto",
        definitionTokens: null,
      },
    ]);
  });

  it("enable -l removes a project mask and reveals the global definition again", async () => {
    const box = sandbox();
    await box.trust({ [box.projectDir]: true });
    await write(
      { servers: { docs: { url: "https://global.example.com/mcp" } } },
      { servers: { docs: { enabled: false }, other: { command: "x" } } },
    );
    expect((await listJson()).servers[0]).toMatchObject({ name: "docs", masked: true });
    const enabled = await cli("enable", "-l", "docs");
    expect(enabled.exitCode).toBe(0);
    expect(await box.readJson(box.projectSettings)).toEqual({ mcp: { servers: { other: { command: "x" } } } });
    expect((await listJson()).servers[0]).toEqual({
      name: "docs",
      scope: "global",
      enabled: true,
      masked: false,
      transport: "http",
      auth: "oauth-on-demand",
      storedAuth: false,
      exposure: "auto",
      definitionTokens: null,
    });
  });
});

describe("untrusted project settings", () => {
  it("are not read at all: neither their servers nor their errors count", async () => {
    await write({ servers: { g: { command: "node" } } }, { servers: { p: { command: "node" }, broken: { nonsense: true } }, extra: 1 });
    const config = await load({ trusted: false });
    expect(config.valid).toBe(true);
    expect(config.servers.map((server) => server.name)).toEqual(["g"]);
    expect(config.sources.projectTrusted).toBe(false);
  });

  it("a malformed untrusted project file is not read either", async () => {
    const box = sandbox();
    await box.writeText(box.projectSettings, "{ this is not json");
    const config = await load({ trusted: false });
    expect(config.valid).toBe(true);
  });

  it("the CLI reads the project only with saved trust in trust.json", async () => {
    const box = sandbox();
    await write(undefined, { servers: { p: { command: "node" } } });
    expect((await listJson()).servers).toEqual([]);
    await box.trust({ [box.projectDir]: true });
    expect((await listJson()).servers.map((server) => server.name)).toEqual(["p"]);
  });
});

describe("${NAME} expansion", () => {
  it("expands in every string value: command, args, cwd, environment values", async () => {
    await write({
      servers: {
        local: {
          command: "${CMD}",
          args: ["--root", "${ROOT}/sub", "${A}-${B}"],
          cwd: "${ROOT}",
          environment: { TOKEN: "${TOKEN}", PLAIN: "plain" },
        },
      },
    });
    const config = await load({ env: { CMD: "node", ROOT: "/srv/docs", A: "left", B: "right", TOKEN: "tok-value-1" } });
    expect(config.issues).toEqual([]);
    expect(config.servers[0]!.definition).toEqual({
      enabled: true,
      transport: "stdio",
      command: "node",
      args: ["--root", "/srv/docs/sub", "left-right"],
      cwd: "/srv/docs",
      environment: { TOKEN: "tok-value-1", PLAIN: "plain" },
    });
  });

  it("expands in url, headers, bearer token and every oauth string, and in tool filters", async () => {
    await write({
      servers: {
        bearer: { url: "https://${HOST}/mcp", headers: { "X-Workspace": "${WS}" }, auth: { type: "bearer", token: "${TOKEN}" } },
        oauth: {
          url: "${URL}",
          auth: { type: "oauth", clientId: "${CID}", clientSecret: "${CSECRET}", redirectUri: "${REDIRECT}", scopes: ["${SCOPE}"] },
          tools: { include: ["${TOOL}"] },
        },
      },
    });
    const config = await load({
      env: {
        HOST: "mcp.example.com",
        WS: "ws-42",
        TOKEN: "token-value",
        URL: "https://oauth.example.com/mcp",
        CID: "client-1",
        CSECRET: "client-secret-value",
        REDIRECT: "http://127.0.0.1:5555/cb",
        SCOPE: "tools.read",
        TOOL: "search",
      },
    });
    expect(config.issues).toEqual([]);
    const [bearer, oauth] = config.servers;
    expect(bearer!.definition).toMatchObject({
      url: "https://mcp.example.com/mcp",
      headers: { "X-Workspace": "ws-42" },
      auth: { type: "bearer", token: "token-value" },
    });
    expect(oauth!.definition).toMatchObject({
      url: "https://oauth.example.com/mcp",
      auth: {
        type: "oauth",
        clientId: "client-1",
        clientSecret: "client-secret-value",
        redirectUri: "http://127.0.0.1:5555/cb",
        scopes: ["tools.read"],
      },
      tools: { include: ["search"] },
    });
    // Every substituted value is remembered as a secret for redaction.
    for (const value of ["mcp.example.com", "ws-42", "token-value", "client-secret-value", "client-1"])
      expect(config.secrets.has(value)).toBe(true);
  });

  it("never expands keys (environment names, header names, server names)", async () => {
    await write({
      servers: {
        local: { command: "node", environment: { "${KEY}": "v" } },
        remote: { url: "https://x.example.com", headers: { "${KEY}": "v" } },
      },
    });
    const config = await load({ env: { KEY: "EXPANDED" } });
    expect(config.servers.find((server) => server.name === "local")!.definition).toMatchObject({ environment: { "${KEY}": "v" } });
    // The header is named as written: `${KEY}` itself, which is no HTTP header name (so the definition is refused, by that name).
    expect(config.issues.map((issue) => issue.path)).toEqual(['mcp.servers.remote.headers["${KEY}"]']);
    expect(JSON.stringify(config)).not.toContain("EXPANDED");
  });

  it('expands once only: VAR_A="${VAR_B}" stays the literal ${VAR_B}', async () => {
    await write({ servers: { remote: { url: "https://x.example.com", headers: { "X-A": "${VAR_A}" } } } });
    const config = await load({ env: { VAR_A: "${VAR_B}", VAR_B: "should-not-appear" } });
    expect(config.issues).toEqual([]);
    expect(config.servers[0]!.definition).toMatchObject({ headers: { "X-A": "${VAR_B}" } });
  });

  it("a url whose variable holds a literal ${OTHER} is still checked as a URL (expansion once, then validation)", async () => {
    await write({ servers: { remote: { url: "${VAR_A}" } } });
    const config = await load({ env: { VAR_A: "${VAR_B}", VAR_B: "https://x.example.com/mcp" } });
    expect(config.valid).toBe(false);
    expect(config.issues.map((issue) => issue.path)).toEqual(["mcp.servers.remote.url"]);
  });

  // An empty value after expansion would send "Authorization: Bearer " or start nothing: invalid.
  it("a bearer token or command that expands to an empty string makes the configuration invalid", async () => {
    await write({
      servers: {
        api: { url: "https://x.example.com", auth: { type: "bearer", token: "${EMPTY}" } },
        local: { command: "${EMPTY}" },
      },
    });
    const config = await load({ env: { EMPTY: "" } });
    expect(config.valid).toBe(false);
    expect(config.issues.map((issue) => issue.path).sort()).toEqual(["mcp.servers.api.auth.token", "mcp.servers.local.command"]);
  });

  it("leaves text that is not a ${NAME} reference alone", async () => {
    await write({ servers: { local: { command: "node", args: ["$HOME", "${}", "${1X}", "$${X}"] } } });
    const config = await load({ env: { X: "x" } });
    expect(config.issues).toEqual([]);
    expect(config.servers[0]!.definition).toMatchObject({ args: ["$HOME", "${}", "${1X}", "$x"] });
  });

  it("a missing variable makes the config invalid, naming the variable and the path", async () => {
    await write({
      servers: {
        remote: { url: "https://x.example.com", headers: { "X-Token": "${PI_MCP_TEST_MISSING_A}" } },
        local: { command: "node", args: ["ok", "${PI_MCP_TEST_MISSING_B}"] },
      },
    });
    const config = await load();
    expect(config.valid).toBe(false);
    const byPath = Object.fromEntries(config.issues.map((issue) => [issue.path, issue.message]));
    expect(Object.keys(byPath).sort()).toEqual(["mcp.servers.local.args[1]", "mcp.servers.remote.headers.X-Token"]);
    expect(byPath["mcp.servers.remote.headers.X-Token"]).toContain("PI_MCP_TEST_MISSING_A");
    expect(byPath["mcp.servers.local.args[1]"]).toContain("PI_MCP_TEST_MISSING_B");
  });

  it("a disabled definition with a missing variable does not invalidate the configuration", async () => {
    await write({
      servers: {
        off: { url: "${PI_MCP_TEST_MISSING}", headers: { A: "${PI_MCP_TEST_MISSING}" }, enabled: false },
        on: { command: "node" },
      },
    });
    const config = await load();
    expect(config.valid).toBe(true);
    expect(config.issues).toEqual([]);
    expect(config.servers.find((server) => server.name === "off")).toMatchObject({ enabled: false, masked: false });
  });

  it("uses the environment it is given, not the test process's", async () => {
    await write({ servers: { local: { command: "node", args: ["${PI_MCP_ONLY_HERE}"] } } });
    expect((await load()).valid).toBe(false);
    expect((await load({ env: { PI_MCP_ONLY_HERE: "yes" } })).valid).toBe(true);
  });
});
