/**
 * `pi-mcp list` and `pi-mcp get` through the built binary: each server's
 * command or URL, its exposure, OAuth on demand (no `auth`) told apart from an
 * explicit `none`, and one definition as written, `${VAR}` unresolved and
 * literal credentials redacted.
 */
import { describe, expect, it } from "vitest";
import { CLI_BIN, nodeBinary, runProcess, useSandbox, type Sandbox } from "../helpers/tmp.ts";

const sandbox = useSandbox();
const LITERAL = "lit3ral-h3ader-value";
const TOKEN = "lit3ral-b3arer-token";
const RESOLVED = "r3solved-s3cret-value";

function piMcp(box: Sandbox, args: readonly string[]) {
  return runProcess(nodeBinary(), [CLI_BIN, ...args], { cwd: box.projectDir, env: box.env({ DOCS_TOKEN: RESOLVED, WS: RESOLVED }) });
}

async function configure(box: Sandbox): Promise<void> {
  await box.writeJson(box.globalSettings, {
    mcp: {
      exposure: "deferred",
      requestTimeoutMs: 90_000,
      servers: {
        docs: {
          command: "node",
          args: ["./tools/docs mcp.mjs", "--verbose"],
          cwd: "tools",
          environment: { DOCS_TOKEN: "${DOCS_TOKEN}", API_KEY: LITERAL },
          exposure: "codemode",
          roots: ["/srv/docs"],
        },
        ondemand: {
          url: "https://ondemand.example.com/mcp",
          headers: { "X-Workspace": "${WS}", "X-Key": LITERAL },
          toolExposure: { "delete_*": "hidden" },
        },
        anonymous: {
          url: "https://anonymous.example.com/mcp",
          auth: { type: "none" },
          connectTimeoutMs: 2_500,
          requestDeadlineMs: 120_000,
        },
        bearer: { url: "https://bearer.example.com/sse", transport: "sse", auth: { type: "bearer", token: TOKEN }, roots: false },
      },
    },
  });
}

describe("list", () => {
  it("shows each server's command line or URL, and tells OAuth on demand from an explicit none", async () => {
    const box = sandbox();
    await configure(box);
    const result = await piMcp(box, ["list"]);
    expect(result.code).toBe(0);
    const rows = result.stdout.split("\n");
    const row = (name: string) => rows.find((line) => line.startsWith(`${name} `)) ?? "";
    expect(rows.find((line) => line.startsWith("NAME "))).toMatch(/\bCOMMAND\/URL$/);
    expect(row("docs")).toMatch(/\s+codemode\s+\?\s+\/srv\/docs\s+node '\.\/tools\/docs mcp\.mjs' --verbose$/);
    expect(row("ondemand")).toMatch(/\s+http\s+oauth \(on demand\)\s+no\s+deferred\s+\?\s+cwd\s+https:\/\/ondemand\.example\.com\/mcp$/);
    expect(row("anonymous")).toMatch(/\s+http\s+none\s+no\s+deferred\s+\?\s+cwd\s+https:\/\/anonymous\.example\.com\/mcp$/);
    expect(row("bearer")).toMatch(/\s+sse\s+bearer\s+no\s+deferred\s+\?\s+none\s+https:\/\/bearer\.example\.com\/sse$/);
    for (const secret of [RESOLVED, TOKEN, LITERAL]) expect(result.stdout).not.toContain(secret);
  });

  it("--json adds exposure and oauth-on-demand, and keeps every documented key", async () => {
    const box = sandbox();
    await configure(box);
    const result = await piMcp(box, ["list", "--json"]);
    expect(result.code).toBe(0);
    const document = JSON.parse(result.stdout) as { servers: Record<string, unknown>[] };
    expect(Object.keys(document).sort()).toEqual(["errors", "servers", "valid"]);
    const byName = Object.fromEntries(document.servers.map((server) => [server.name, server]));
    expect(byName.docs).toEqual({
      name: "docs",
      scope: "global",
      enabled: true,
      masked: false,
      transport: "stdio",
      auth: "none",
      storedAuth: false,
      exposure: "codemode",
      definitionTokens: null,
    });
    expect(byName.ondemand).toEqual({
      name: "ondemand",
      scope: "global",
      enabled: true,
      masked: false,
      transport: "http",
      auth: "oauth-on-demand",
      storedAuth: false,
      exposure: "deferred",
      definitionTokens: null,
    });
    expect(byName.anonymous).toMatchObject({ auth: "none", exposure: "deferred" });
    expect(byName.bearer).toMatchObject({ auth: "bearer", transport: "sse" });
  });
});

describe("list of definitions that are odd or wrong", () => {
  it("a command definition is stdio with no authentication, whatever transport or auth it wrongly names", async () => {
    const box = sandbox();
    await box.writeJson(box.globalSettings, {
      mcp: {
        servers: {
          wrongTransport: { command: "x", transport: "http" },
          wrongAuth: { command: "x", auth: { type: "bearer", token: TOKEN } },
        },
      },
    });
    const document = JSON.parse((await piMcp(box, ["list", "--json"])).stdout) as { valid: boolean; servers: Record<string, unknown>[] };
    expect(document.valid).toBe(false);
    for (const server of document.servers) expect(server).toMatchObject({ transport: "stdio", auth: "none" });
  });

  it("roots: an empty list reads 'empty', a URL or ~name is a settings problem with its path, an unset variable is shown as written", async () => {
    const box = sandbox();
    await box.writeJson(box.globalSettings, {
      mcp: {
        servers: {
          none: { command: "x", roots: [] },
          url: { command: "x", roots: ["file:///etc", "~root"] },
          unset: { command: "x", roots: ["${PI_MCP_UNSET_ROOT}"] },
        },
      },
    });
    const list = await piMcp(box, ["list"]);
    const row = (name: string) => list.stdout.split("\n").find((line) => line.startsWith(`${name} `)) ?? "";
    expect(row("none")).toMatch(/\sempty\s+x$/);
    expect(row("unset")).toMatch(/\s\$\{PI_MCP_UNSET_ROOT\}\s+x$/);
    expect(list.stdout).not.toContain(`${box.projectDir}/\${`);
    const document = JSON.parse((await piMcp(box, ["list", "--json"])).stdout) as { errors: { path: string; message: string }[] };
    const problems = Object.fromEntries(document.errors.map((error) => [error.path, error.message]));
    expect(problems["mcp.servers.url.roots[0]"]).toMatch(/must be a folder path, not a URL/);
    expect(problems["mcp.servers.url.roots[1]"]).toMatch(/only ~ and ~\/… mean your home folder/);
    expect(problems["mcp.servers.unset.roots[0]"]).toMatch(/PI_MCP_UNSET_ROOT is not set/);
  });
});

describe("get", () => {
  it("shows one local definition as written: command line, working folder, environment (${VAR} unresolved, literals redacted), exposure, roots (a missing folder said so), timeouts with the total deadline", async () => {
    const box = sandbox();
    await configure(box);
    const result = await piMcp(box, ["get", "docs"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(
      [
        "docs",
        `  scope:       global (${box.globalSettings})`,
        "  state:       enabled",
        "  transport:   stdio",
        "  command:     node './tools/docs mcp.mjs' --verbose",
        "  cwd:         tools",
        "  environment: DOCS_TOKEN=${DOCS_TOKEN}",
        "               API_KEY=‹redacted›",
        "  exposure:    codemode",
        "  tokens:      ? (no catalog recorded yet: a Pi session records it)",
        "  roots:       /srv/docs (no such folder)",
        "  timeouts:    connect 10000 ms, request 90000 ms, deadline 600000 ms",
        "  first turn:  waits up to 5000 ms for its tools (print, JSON, RPC)",
        "",
      ].join("\n"),
    );
  });

  it("shows a remote definition's URL, headers, auth (on demand, none, bearer with its token redacted), stored credentials and per-tool exposure", async () => {
    const box = sandbox();
    await configure(box);
    const [ondemand, anonymous, bearer] = await Promise.all([
      piMcp(box, ["get", "ondemand"]),
      piMcp(box, ["get", "anonymous"]),
      piMcp(box, ["get", "bearer"]),
    ]);
    expect(ondemand.stdout).toContain(
      "  url:         https://ondemand.example.com/mcp\n  headers:     X-Workspace: ${WS}\n               X-Key: ‹redacted›\n",
    );
    expect(ondemand.stdout).toMatch(/^ {2}auth:\s+oauth on demand \(no auth setting: OAuth when the server asks/m);
    expect(ondemand.stdout).toMatch(/^ {2}stored auth: no$/m);
    expect(ondemand.stdout).toMatch(/^ {2}exposure:\s+deferred; per tool: delete_\*=hidden$/m);
    expect(anonymous.stdout).toMatch(/^ {2}auth:\s+none$/m);
    expect(anonymous.stdout).toMatch(/^ {2}timeouts:\s+connect 2500 ms, request 90000 ms, deadline 120000 ms$/m);
    expect(bearer.stdout).toMatch(/^ {2}auth:\s+bearer\n\s+token: ‹redacted›$/m);
    expect(bearer.stdout).toMatch(/^ {2}roots:\s+none$/m);
    for (const output of [ondemand, anonymous, bearer].flatMap((run) => [run.stdout, run.stderr])) {
      for (const secret of [RESOLVED, TOKEN, LITERAL]) expect(output).not.toContain(secret);
    }
  });

  it("--json prints the definition as one document, with the same redactions", async () => {
    const box = sandbox();
    await configure(box);
    const result = await piMcp(box, ["get", "ondemand", "--json"]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      name: "ondemand",
      scope: "global",
      file: box.globalSettings,
      enabled: true,
      masked: false,
      transport: "http",
      url: "https://ondemand.example.com/mcp",
      command: null,
      args: [],
      cwd: null,
      headers: { "X-Workspace": "${WS}", "X-Key": "‹redacted›" },
      environment: {},
      auth: "oauth-on-demand",
      authSettings: null,
      storedAuth: false,
      exposure: "deferred",
      definitionTokens: null,
      toolExposure: { "delete_*": "hidden" },
      tools: null,
      roots: "cwd",
      connectTimeoutMs: 10_000,
      requestTimeoutMs: 90_000,
      requestDeadlineMs: 600_000,
      firstRequestWaitMs: 5_000,
      errors: [],
    });
    const bearer = JSON.parse((await piMcp(box, ["get", "bearer", "--json"])).stdout) as Record<string, unknown>;
    expect(bearer).toMatchObject({ auth: "bearer", authSettings: { type: "bearer", token: "‹redacted›" }, roots: false });
  });

  it("says how long the first model request of a run without a terminal UI waits for the server: firstRequestWaitMs, never beyond its connectTimeoutMs; a lazy or disabled server is not waited for", async () => {
    const box = sandbox();
    await box.writeJson(box.globalSettings, {
      mcp: {
        firstRequestWaitMs: 4_000,
        servers: {
          plain: { command: "node" },
          quick: { command: "node", connectTimeoutMs: 1_500 },
          later: { command: "node", lifecycle: "lazy" },
          off: { command: "node", enabled: false },
        },
      },
    });
    // One program at a time: eight at once on a busy machine outlast the runner's timeout.
    const get = async (name: string) => {
      const text = await piMcp(box, ["get", name]);
      const json = await piMcp(box, ["get", name, "--json"]);
      return { text: text.stdout, wait: (JSON.parse(json.stdout) as { firstRequestWaitMs: number }).firstRequestWaitMs };
    };
    const plain = await get("plain");
    const quick = await get("quick");
    const later = await get("later");
    const off = await get("off");
    expect(plain.text).toMatch(/^ {2}first turn:\s+waits up to 4000 ms for its tools \(print, JSON, RPC\)$/m);
    expect(plain.wait).toBe(4_000);
    expect(quick.text).toMatch(/^ {2}first turn:\s+waits up to 1500 ms /m);
    expect(quick.wait).toBe(1_500);
    expect(later.text).toMatch(/^ {2}first turn:\s+not waited for$/m);
    expect(later.wait).toBe(0);
    expect(off.text).not.toContain("first turn");
    expect(off.wait).toBe(0);
  });

  it("an unknown server exits 1 with a one-line reason; a broken definition is shown with its problems", async () => {
    const box = sandbox();
    await box.writeJson(box.globalSettings, { mcp: { servers: { broken: { url: "ftp://files.example.com" } } } });
    const missing = await piMcp(box, ["get", "ghost"]);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe("");
    expect(missing.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(missing.stderr).toContain('"ghost" is not configured');
    const broken = await piMcp(box, ["get", "broken"]);
    expect(broken.code).toBe(0);
    expect(broken.stdout).toMatch(/^ {2}url:\s+ftp:\/\/files\.example\.com$/m);
    expect(broken.stdout).toMatch(/^ {2}problems:\s+mcp\.servers\.broken\.url: /m);
  });
});
