/**
 * Every validation rule of "Configure servers": one failing case each, with
 * the exact dotted path, read from a real settings.json in a temporary agent
 * folder (PI_CODING_AGENT_DIR).
 */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.ts";
import { agentDir } from "../../src/config/paths.ts";
import type { EffectiveConfig } from "../../src/kernel/settings.ts";
import { useSandbox } from "../helpers/tmp.ts";

const sandbox = useSandbox();

/** Writes `{ "mcp": mcp }` as the global settings and loads the effective configuration. */
async function load(mcp: unknown, extraEnv: Record<string, string> = {}): Promise<EffectiveConfig> {
  const box = sandbox();
  await box.writeJson(box.globalSettings, { mcp });
  const env = box.env(extraEnv);
  return loadConfig({ agentDir: agentDir(env), cwd: box.projectDir, projectTrusted: false, env });
}

function paths(config: EffectiveConfig): string[] {
  return config.issues.map((issue) => issue.path).sort();
}

/** Asserts the configuration is invalid with exactly these issue paths (every problem, nothing else). */
function expectIssues(config: EffectiveConfig, expected: string[]): void {
  expect(config.valid).toBe(false);
  expect(paths(config)).toEqual([...expected].sort());
}

function issueAt(config: EffectiveConfig, path: string): string {
  const issue = config.issues.find((candidate) => candidate.path === path);
  expect(issue, `an issue at ${path}`).toBeDefined();
  return issue!.message;
}

describe("exactly one of command / url", () => {
  it("rejects a definition with neither command nor url at the server's path", async () => {
    const config = await load({ servers: { docs: { args: ["x"] } } });
    expectIssues(config, ["mcp.servers.docs"]);
    expect(issueAt(config, "mcp.servers.docs")).toMatch(/command|url/);
  });

  it("rejects a definition with both command and url at the server's path", async () => {
    const config = await load({ servers: { docs: { command: "node", url: "https://mcp.example.com/mcp" } } });
    expectIssues(config, ["mcp.servers.docs"]);
    expect(issueAt(config, "mcp.servers.docs")).toMatch(/both/);
  });

  it("defaults a command definition to stdio and a url definition to Streamable HTTP", async () => {
    const config = await load({
      servers: { local: { command: "node" }, remote: { url: "https://mcp.example.com/mcp" } },
    });
    expect(config.valid).toBe(true);
    expect(config.servers.map((server) => [server.name, server.transport])).toEqual([
      ["local", "stdio"],
      ["remote", "http"],
    ]);
    expect(config.servers[1]!.definition).toMatchObject({ transport: "http", url: "https://mcp.example.com/mcp" });
  });
});

describe("transport", () => {
  it('accepts transport "sse" when written on a url definition', async () => {
    const config = await load({ servers: { legacy: { url: "http://127.0.0.1:3000/sse", transport: "sse" } } });
    expect(config.valid).toBe(true);
    expect(config.servers[0]!.transport).toBe("sse");
    expect(config.servers[0]!.definition).toMatchObject({ transport: "sse" });
  });

  it('rejects transport "sse" on a command definition at mcp.servers.<name>.transport', async () => {
    const config = await load({ servers: { local: { command: "node", transport: "sse" } } });
    expectIssues(config, ["mcp.servers.local.transport"]);
  });

  it('rejects transport "http" on a command definition', async () => {
    const config = await load({ servers: { local: { command: "node", transport: "http" } } });
    expectIssues(config, ["mcp.servers.local.transport"]);
  });

  it('rejects transport "stdio" on a url definition', async () => {
    const config = await load({ servers: { remote: { url: "https://mcp.example.com/mcp", transport: "stdio" } } });
    expectIssues(config, ["mcp.servers.remote.transport"]);
  });

  it("rejects an unknown transport name", async () => {
    const config = await load({ servers: { remote: { url: "https://mcp.example.com/mcp", transport: "websocket" } } });
    expectIssues(config, ["mcp.servers.remote.transport"]);
  });
});

describe("remote URLs must be absolute http(s) URLs", () => {
  it("rejects a relative URL at mcp.servers.<name>.url", async () => {
    expectIssues(await load({ servers: { remote: { url: "/mcp" } } }), ["mcp.servers.remote.url"]);
  });

  it("rejects an ftp: URL", async () => {
    expectIssues(await load({ servers: { remote: { url: "ftp://files.example.com/mcp" } } }), ["mcp.servers.remote.url"]);
  });

  it("rejects a ${VAR} url that expands to something that is not a URL", async () => {
    const config = await load({ servers: { remote: { url: "${MCP_URL}" } } }, { MCP_URL: "not a url at all" });
    expectIssues(config, ["mcp.servers.remote.url"]);
  });

  it("accepts http and https URLs, including one that comes from a ${VAR}", async () => {
    const config = await load(
      { servers: { a: { url: "http://127.0.0.1:8080/mcp" }, b: { url: "https://mcp.example.com/mcp" }, c: { url: "${MCP_URL}" } } },
      { MCP_URL: "https://from-env.example.com/mcp" },
    );
    expect(config.issues).toEqual([]);
    expect(config.servers[2]!.definition).toMatchObject({ url: "https://from-env.example.com/mcp" });
  });
});

describe("process fields and remote fields stay on their side", () => {
  it("rejects args, cwd and environment on a remote definition, reporting each field", async () => {
    const config = await load({
      servers: { remote: { url: "https://mcp.example.com/mcp", args: ["x"], cwd: ".", environment: { A: "b" } } },
    });
    expectIssues(config, ["mcp.servers.remote.args", "mcp.servers.remote.cwd", "mcp.servers.remote.environment"]);
  });

  it("rejects headers and auth on a local definition, reporting each field", async () => {
    const config = await load({ servers: { local: { command: "node", headers: { A: "b" }, auth: { type: "none" } } } });
    expectIssues(config, ["mcp.servers.local.headers", "mcp.servers.local.auth"]);
  });
});

describe("the three auth shapes", () => {
  it('accepts { "type": "none" }, bearer with a token, and oauth with every optional field', async () => {
    const config = await load({
      servers: {
        anonymous: { url: "https://a.example.com/mcp", auth: { type: "none" } },
        bearer: { url: "https://b.example.com/mcp", auth: { type: "bearer", token: "literal-token" } },
        oauth: {
          url: "https://c.example.com/mcp",
          auth: {
            type: "oauth",
            clientId: "client",
            clientSecret: "secret",
            redirectUri: "http://127.0.0.1:19876/mcp/oauth/callback",
            scopes: ["tools.read", "resources.read"],
          },
        },
        bare: { url: "https://d.example.com/mcp" },
      },
    });
    expect(config.issues).toEqual([]);
    expect(Object.fromEntries(config.servers.map((server) => [server.name, server.auth]))).toEqual({
      anonymous: "none",
      bare: "none",
      bearer: "bearer",
      oauth: "oauth",
    });
  });

  it('rejects an unknown auth type "basic" at mcp.servers.remote-docs.auth.type', async () => {
    const config = await load({ servers: { "remote-docs": { url: "https://mcp.example.com/mcp", auth: { type: "basic" } } } });
    expectIssues(config, ["mcp.servers.remote-docs.auth.type"]);
  });

  it("rejects bearer auth without a token at ...auth.token", async () => {
    const config = await load({ servers: { remote: { url: "https://mcp.example.com/mcp", auth: { type: "bearer" } } } });
    expectIssues(config, ["mcp.servers.remote.auth.token"]);
  });

  it("rejects an unknown field inside oauth auth at its own path", async () => {
    const config = await load({
      servers: { remote: { url: "https://mcp.example.com/mcp", auth: { type: "oauth", audience: "x" } } },
    });
    expectIssues(config, ["mcp.servers.remote.auth.audience"]);
  });

  it("rejects oauth scopes that are not a list of strings", async () => {
    const config = await load({ servers: { remote: { url: "https://mcp.example.com/mcp", auth: { type: "oauth", scopes: "a b" } } } });
    expectIssues(config, ["mcp.servers.remote.auth.scopes"]);
  });
});

describe("bearer auth and a configured Authorization header", () => {
  it.each(["Authorization", "authorization", "AUTHORIZATION"])("rejects bearer auth together with a %s header", async (header) => {
    const config = await load({
      servers: {
        remote: { url: "https://mcp.example.com/mcp", headers: { [header]: "Bearer x" }, auth: { type: "bearer", token: "t0k3n" } },
      },
    });
    expectIssues(config, ["mcp.servers.remote.auth"]);
  });

  it("accepts an Authorization header without bearer auth", async () => {
    const config = await load({ servers: { remote: { url: "https://mcp.example.com/mcp", headers: { Authorization: "Bearer x" } } } });
    expect(config.issues).toEqual([]);
  });
});

describe("OAuth redirectUri must be an http loopback URL", () => {
  it.each([
    ["an https loopback URL", "https://127.0.0.1:19876/cb"],
    ["a public host", "http://example.com/cb"],
    ["a host that only starts with 127.0.0.1", "http://127.0.0.1.example.com/cb"],
    ["a relative path", "/mcp/oauth/callback"],
  ])("rejects %s at ...auth.redirectUri", async (_, redirectUri) => {
    const config = await load({ servers: { remote: { url: "https://mcp.example.com/mcp", auth: { type: "oauth", redirectUri } } } });
    expectIssues(config, ["mcp.servers.remote.auth.redirectUri"]);
  });

  it.each(["http://127.0.0.1:19876/mcp/oauth/callback", "http://localhost:8080/cb", "http://[::1]:9000/cb"])(
    "accepts the loopback redirect %s",
    async (redirectUri) => {
      const config = await load({ servers: { remote: { url: "https://mcp.example.com/mcp", auth: { type: "oauth", redirectUri } } } });
      expect(config.issues).toEqual([]);
      expect(config.valid).toBe(true);
    },
  );
});

describe("enabled", () => {
  it("defaults to true when omitted", async () => {
    const config = await load({ servers: { local: { command: "node" } } });
    expect(config.servers[0]).toMatchObject({ enabled: true, masked: false });
    expect(config.servers[0]!.definition?.enabled).toBe(true);
  });

  it("is false when written false", async () => {
    const config = await load({ servers: { local: { command: "node", enabled: false } } });
    expect(config.valid).toBe(true);
    expect(config.servers[0]).toMatchObject({ enabled: false, masked: false });
  });

  it("rejects a non-boolean enabled at its path", async () => {
    expectIssues(await load({ servers: { local: { command: "node", enabled: "yes" } } }), ["mcp.servers.local.enabled"]);
  });
});

describe("unknown fields are rejected at every level", () => {
  it.each([
    ["top level", { servers: {}, colour: "red" }, "mcp.colour"],
    ["retry", { retry: { jitter: true } }, "mcp.retry.jitter"],
    ["server", { servers: { local: { command: "node", shell: true } } }, "mcp.servers.local.shell"],
    ["auth (none)", { servers: { r: { url: "https://x.example.com", auth: { type: "none", token: "x" } } } }, "mcp.servers.r.auth.token"],
    [
      "auth (bearer)",
      { servers: { r: { url: "https://x.example.com", auth: { type: "bearer", token: "x", scheme: "Token" } } } },
      "mcp.servers.r.auth.scheme",
    ],
    ["tools", { servers: { local: { command: "node", tools: { include: ["a"], only: ["b"] } } } }, "mcp.servers.local.tools.only"],
  ])("rejects an unknown field at the %s", async (_, mcp, path) => {
    const config = await load(mcp);
    expectIssues(config, [path]);
    expect(issueAt(config, path)).toMatch(/unknown field/);
  });
});

describe("types of timeouts and retry", () => {
  it("rejects every wrongly typed top-level timeout and retry field, each at its own path", async () => {
    const config = await load({
      connectTimeoutMs: "10000",
      requestTimeoutMs: -5,
      retry: { maxRetries: 1.5, initialDelayMs: "1s", maxDelayMs: 0, backoffFactor: 0.5 },
    });
    expectIssues(config, [
      "mcp.connectTimeoutMs",
      "mcp.requestTimeoutMs",
      "mcp.retry.maxRetries",
      "mcp.retry.initialDelayMs",
      "mcp.retry.maxDelayMs",
      "mcp.retry.backoffFactor",
    ]);
  });

  it("rejects wrongly typed per-server timeouts", async () => {
    const config = await load({ servers: { local: { command: "node", connectTimeoutMs: 0, requestTimeoutMs: "60000" } } });
    expectIssues(config, ["mcp.servers.local.connectTimeoutMs", "mcp.servers.local.requestTimeoutMs"]);
  });

  it("accepts maxRetries 0 and a backoffFactor of exactly 1", async () => {
    const config = await load({ retry: { maxRetries: 0, backoffFactor: 1 } });
    expect(config.issues).toEqual([]);
    expect(config.retry).toMatchObject({ maxRetries: 0, backoffFactor: 1 });
  });

  it("firstRequestWaitMs is a whole number of milliseconds, 0 or more (5,000 unless set); anything else is refused at its path", async () => {
    expect((await load({})).firstRequestWaitMs).toBe(5_000);
    const off = await load({ firstRequestWaitMs: 0 });
    expect(off.issues).toEqual([]);
    expect(off.firstRequestWaitMs).toBe(0);
    for (const wrong of [-1, 2.5, "3000", null, true]) expectIssues(await load({ firstRequestWaitMs: wrong }), ["mcp.firstRequestWaitMs"]);
    expectIssues(await load({ servers: { local: { command: "node", firstRequestWaitMs: 1_000 } } }), [
      "mcp.servers.local.firstRequestWaitMs",
    ]);
  });

  it("type error messages do not repeat the settings path", async () => {
    const config = await load({ connectTimeoutMs: "x", servers: { local: { command: "node", enabled: "yes", args: [1] } } });
    for (const issue of config.issues) expect(issue.message, issue.path).not.toMatch(/servers\.local|connectTimeoutMs/);
  });
});

describe("per-server settings", () => {
  it("accepts per-server connectTimeoutMs, requestTimeoutMs and tools.include / tools.exclude", async () => {
    const config = await load({
      servers: {
        local: { command: "node", connectTimeoutMs: 500, requestTimeoutMs: 2_000, tools: { include: ["read_*"], exclude: ["write"] } },
      },
    });
    expect(config.issues).toEqual([]);
    expect(config.servers[0]!.definition).toMatchObject({
      connectTimeoutMs: 500,
      requestTimeoutMs: 2_000,
      tools: { include: ["read_*"], exclude: ["write"] },
    });
  });

  it("rejects tools.include that is not a list of strings", async () => {
    const config = await load({ servers: { local: { command: "node", tools: { include: "read", exclude: [1] } } } });
    expectIssues(config, ["mcp.servers.local.tools.include", "mcp.servers.local.tools.exclude[0]"]);
  });

  it("rejects non-string args and environment values at their element paths", async () => {
    const config = await load({ servers: { local: { command: "node", args: ["ok", 2], environment: { N: 1 } } } });
    expectIssues(config, ["mcp.servers.local.args[1]", "mcp.servers.local.environment.N"]);
  });

  it("rejects an empty command", async () => {
    expectIssues(await load({ servers: { local: { command: "" } } }), ["mcp.servers.local.command"]);
  });
});

describe("roots", () => {
  it("accepts roots as false or a list of folders, per server and at the top level, ${NAME} expanded in a server's", async () => {
    const config = await load(
      { roots: ["~/work"], servers: { own: { command: "node", roots: ["${ROOT_DIR}", "rel"] }, none: { command: "node", roots: false } } },
      { ROOT_DIR: "/srv/data" },
    );
    expect(config.issues).toEqual([]);
    expect(config.roots).toEqual(["~/work"]);
    expect(config.servers.find((server) => server.name === "own")!.definition?.roots).toEqual(["/srv/data", "rel"]);
    expect(config.servers.find((server) => server.name === "none")!.definition?.roots).toBe(false);
  });

  it("rejects roots that are true, a string, or hold an empty or non-string folder, each at its own path", async () => {
    const config = await load({
      roots: true,
      servers: {
        a: { command: "node", roots: "/srv" },
        b: { url: "https://mcp.example.com/mcp", roots: ["/ok", ""] },
        c: { command: "node", roots: [3] },
      },
    });
    expectIssues(config, ["mcp.roots", "mcp.servers.a.roots", "mcp.servers.b.roots[1]", "mcp.servers.c.roots[0]"]);
    expect(issueAt(config, "mcp.servers.a.roots")).toBe("must be false or a list of folders (was a string)");
    expect(issueAt(config, "mcp.roots")).toBe("must be false or a list of folders (was true)");
  });
});

describe("the file of a problem", () => {
  it("every issue names the settings file that holds it, a missing ${NAME} included", async () => {
    const box = sandbox();
    const config = await load({
      retry: { maxRetries: -1 },
      servers: { docs: { command: "node", environment: { T: "${PI_MCP_UNSET_VARIABLE}" } } },
    });
    expect(config.issues.map((issue) => [issue.path, issue.file])).toEqual(
      expect.arrayContaining([
        ["mcp.retry.maxRetries", box.globalSettings],
        ["mcp.servers.docs.environment.T", box.globalSettings],
      ]),
    );
  });
});

describe("server names", () => {
  it.each([
    ["a space", "bad name", 'mcp.servers["bad name"]'],
    ["a leading dash", "-x", 'mcp.servers["-x"]'],
    ["an empty name", "", 'mcp.servers[""]'],
    ["a slash", "a/b", 'mcp.servers["a/b"]'],
    ["more than 64 characters", "a".repeat(65), `mcp.servers.${"a".repeat(65)}`],
  ])("rejects a server name with %s", async (_, name, path) => {
    expectIssues(await load({ servers: { [name]: { command: "node" } } }), [path]);
  });

  it("accepts letters, digits, '_', '.' and '-' (dotted names are quoted in paths)", async () => {
    const config = await load({ servers: { "a.b": { url: "nope" }, "A_1-z": { command: "node" } } });
    // The dotted name is valid; its bad URL is reported under a quoted key.
    expectIssues(config, ['mcp.servers["a.b"].url']);
  });
});

describe("the wrong JSON type where an object is required", () => {
  it("rejects a non-object mcp value at the path mcp", async () => {
    expectIssues(await load("servers"), ["mcp"]);
    expectIssues(await load(null), ["mcp"]);
  });

  it("rejects a server definition that is a number", async () => {
    expectIssues(await load({ servers: { local: 5 } }), ["mcp.servers.local"]);
  });

  it("rejects arrays where an object is required (mcp, retry, servers, a definition, tools, environment, headers)", async () => {
    const checks: [unknown, string][] = [
      [[], "mcp"],
      [{ retry: [] }, "mcp.retry"],
      [{ servers: [] }, "mcp.servers"],
      [{ servers: { a: [] } }, "mcp.servers.a"],
      [{ servers: { a: { command: "node", tools: [] } } }, "mcp.servers.a.tools"],
      [{ servers: { a: { command: "node", environment: [] } } }, "mcp.servers.a.environment"],
      [{ servers: { a: { url: "https://x.example.com", headers: ["X-A: b"] } } }, "mcp.servers.a.headers"],
    ];
    const accepted: string[] = [];
    for (const [mcp, path] of checks) {
      const config = await load(mcp);
      if (config.valid || !paths(config).includes(path)) accepted.push(path);
    }
    expect(accepted, "paths whose array value was accepted").toEqual([]);
  });
});

describe("every problem is reported, not only the first", () => {
  it("reports shape and rule problems across servers, levels and both files together", async () => {
    const box = sandbox();
    await box.writeJson(box.globalSettings, {
      mcp: {
        bogus: 1,
        retry: { maxRetries: -1 },
        servers: {
          "remote-docs": { url: "https://mcp.example.com/mcp", auth: { type: "basic" } },
          neither: {},
          both: { command: "node", url: "https://x.example.com" },
          relative: { url: "/mcp" },
          remoteProcess: { url: "https://x.example.com", cwd: ".", args: [] },
          localRemote: { command: "node", headers: {} },
          badRedirect: { url: "https://x.example.com", auth: { type: "oauth", redirectUri: "https://example.com/cb" } },
          bearerHeader: { url: "https://x.example.com", headers: { authorization: "x" }, auth: { type: "bearer", token: "t" } },
          missingVar: { command: "node", args: ["${PI_MCP_TEST_UNSET_VARIABLE}"] },
        },
      },
    });
    await box.writeJson(box.projectSettings, { mcp: { servers: { projectOnly: { command: "node", extra: true } } } });
    await box.trust({ [box.projectDir]: true });
    const env = box.env();
    const config = await loadConfig({ agentDir: agentDir(env), cwd: box.projectDir, projectTrusted: true, env });
    expectIssues(config, [
      "mcp.bogus",
      "mcp.retry.maxRetries",
      "mcp.servers.remote-docs.auth.type",
      "mcp.servers.neither",
      "mcp.servers.both",
      "mcp.servers.relative.url",
      "mcp.servers.remoteProcess.cwd",
      "mcp.servers.remoteProcess.args",
      "mcp.servers.localRemote.headers",
      "mcp.servers.badRedirect.auth.redirectUri",
      "mcp.servers.bearerHeader.auth",
      "mcp.servers.missingVar.args[0]",
      "mcp.servers.projectOnly.extra",
    ]);
    const projectIssue = config.issues.find((issue) => issue.path === "mcp.servers.projectOnly.extra");
    expect(projectIssue?.file).toBe(box.projectSettings);
    expect(config.issues.find((issue) => issue.path === "mcp.bogus")?.file).toBe(box.globalSettings);
  });

  it("a settings file that is not JSON makes the config invalid at path mcp, naming the file", async () => {
    const box = sandbox();
    await box.writeText(box.globalSettings, "{ not json");
    const env = box.env();
    const config = await loadConfig({ agentDir: agentDir(env), cwd: box.projectDir, projectTrusted: false, env });
    expectIssues(config, ["mcp"]);
    expect(config.issues[0]!.message).toContain(box.globalSettings);
    expect(config.issues[0]!.message).toMatch(/not valid JSON/);
  });
});

describe("mcp.features", () => {
  it("switches feature plugins off by name, each other feature staying on", async () => {
    const config = await load({ features: { sampling: false, observer: false, prompts: true }, servers: {} });
    expect(config.valid).toBe(true);
    expect(config.features).toMatchObject({
      sampling: false,
      observer: false,
      prompts: true,
      resources: true,
      elicitation: true,
      roots: true,
    });
  });

  it("rejects a feature that is not a boolean, and a name that is no feature, at their paths", async () => {
    const config = await load({ features: { sampling: "off", "tool-names": false }, servers: {} });
    expectIssues(config, ["mcp.features.sampling", "mcp.features.tool-names"]);
    expect(issueAt(config, "mcp.features.sampling")).toMatch(/boolean/);
  });

  it("a project's features win feature by feature over the global ones", async () => {
    const box = sandbox();
    await box.writeJson(box.globalSettings, { mcp: { features: { sampling: false, roots: false } } });
    await box.writeJson(box.projectSettings, { mcp: { features: { roots: true } } });
    const env = box.env();
    const config = await loadConfig({ agentDir: agentDir(env), cwd: box.projectDir, projectTrusted: true, env });
    expect(config.features).toMatchObject({ sampling: false, roots: true });
  });
});
