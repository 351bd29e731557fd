import { LIST_JSON_SERVER_KEYS } from "../helpers/package.ts";
/**
 * The shared command core (`runCommandLine`) on the CLI surface
 * (`cliCommandEnvironment`, via test/helpers/tmp.ts) and on a hand-built Pi surface: add / remove /
 * enable / disable / list, their files, exit codes and usage errors.
 */
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { commandsFor, helpCommand, runCommandLine, type CommandEnvironment } from "../../src/commands/index.ts";
import { runtimeCommands, surfaceCommands } from "../../src/composition.ts";
import { loadConfig } from "../../src/config/load.ts";
import { noKernel, runCli, useSandbox, type Sandbox } from "../helpers/tmp.ts";

const sandbox = useSandbox();

async function cli(...argv: string[]) {
  const box = sandbox();
  return runCli(argv, box.projectDir, box.env());
}

async function globalServers(): Promise<Record<string, unknown>> {
  const box = sandbox();
  const data = (await box.readJson(box.globalSettings)) as { mcp?: { servers?: Record<string, unknown> } };
  return data.mcp?.servers ?? {};
}

async function projectServers(): Promise<Record<string, unknown>> {
  const box = sandbox();
  const data = (await box.readJson(box.projectSettings)) as { mcp?: { servers?: Record<string, unknown> } };
  return data.mcp?.servers ?? {};
}

interface Recorded {
  readonly env: CommandEnvironment;
  readonly events: string[];
}

/** A Pi-surface environment with saved trust, a recording runtime and a fake credential store. */
function piEnvironment(box: Sandbox, options: { savedTrust?: boolean | null; stored?: string[] } = {}): Recorded {
  const events: string[] = [];
  const stored = new Set(options.stored ?? []);
  const savedTrust = options.savedTrust === undefined ? true : options.savedTrust;
  const env = box.env();
  return {
    events,
    env: {
      surface: "pi",
      agentDir: box.agentDir,
      cwd: box.projectDir,
      env,
      projectTrusted: savedTrust === true,
      savedTrust,
      credentials: {
        has: async (server) => stored.has(server),
        remove: async (server) => {
          events.push(`logout ${server}`);
          return stored.delete(server);
        },
      },
      createKernel: noKernel,
      runtime: {
        status: (): never => {
          throw new Error("configuration commands never ask for status");
        },
        reconnect: async () => {},
        host: (): never => {
          throw new Error("configuration commands never ask for the host");
        },
        settled: async () => true,
        async settingsChanged(server, change) {
          // Record what the file held at the moment the runtime was told: persistence comes first.
          const data = existsSync(box.globalSettings)
            ? ((await box.readJson(box.globalSettings)) as { mcp?: { servers?: Record<string, unknown> } })
            : {};
          events.push(`${change} ${server} ${JSON.stringify(data.mcp?.servers?.[server] ?? null)}`);
        },
      },
      loadConfig: () => loadConfig({ agentDir: box.agentDir, cwd: box.projectDir, projectTrusted: savedTrust === true, env }),
    },
  };
}

describe("add (remote)", () => {
  it("writes url, --transport sse and repeated --header NAME=VALUE (values may contain '=')", async () => {
    const result = await cli(
      "add",
      "docs",
      "https://mcp.example.com/mcp",
      "--transport",
      "sse",
      "--header",
      "X-A=1",
      "--header",
      "X-B=k=v",
    );
    expect(result).toMatchObject({ exitCode: 0 });
    expect(result.output).toBe(`Added global server "docs" in ${sandbox().globalSettings}`);
    expect(await globalServers()).toEqual({
      docs: { url: "https://mcp.example.com/mcp", transport: "sse", headers: { "X-A": "1", "X-B": "k=v" } },
    });
  });

  it("writes --auth bearer --token", async () => {
    expect((await cli("add", "api", "https://mcp.example.com/mcp", "--auth", "bearer", "--token", "${MCP_TOKEN}")).exitCode).toBe(0);
    expect(await globalServers()).toEqual({ api: { url: "https://mcp.example.com/mcp", auth: { type: "bearer", token: "${MCP_TOKEN}" } } });
  });

  it("writes --auth oauth with --client-id, --client-secret, --redirect-uri and repeated --scope", async () => {
    const result = await cli(
      "add",
      "remote-docs",
      "https://mcp.example.com/mcp",
      "--auth",
      "oauth",
      "--client-id",
      "https://client.example.com/metadata.json",
      "--client-secret",
      "${MCP_CLIENT_SECRET}",
      "--redirect-uri",
      "http://127.0.0.1:19876/mcp/oauth/callback",
      "--scope",
      "tools.read",
      "--scope",
      "resources.read",
    );
    expect(result.exitCode).toBe(0);
    expect(await globalServers()).toEqual({
      "remote-docs": {
        url: "https://mcp.example.com/mcp",
        auth: {
          type: "oauth",
          clientId: "https://client.example.com/metadata.json",
          clientSecret: "${MCP_CLIENT_SECRET}",
          redirectUri: "http://127.0.0.1:19876/mcp/oauth/callback",
          scopes: ["tools.read", "resources.read"],
        },
      },
    });
  });

  it("writes --auth none and --transport http as given", async () => {
    expect((await cli("add", "anon", "http://127.0.0.1:8080/mcp", "--auth", "none", "--transport", "http")).exitCode).toBe(0);
    expect(await globalServers()).toEqual({ anon: { url: "http://127.0.0.1:8080/mcp", transport: "http", auth: { type: "none" } } });
  });

  it("refuses a definition that breaks a rule (non-loopback --redirect-uri) with exit 1, the path, and no write", async () => {
    const result = await cli("add", "docs", "https://mcp.example.com/mcp", "--auth", "oauth", "--redirect-uri", "https://example.com/cb");
    expect(result.exitCode).toBe(1);
    expect(result.output).toContain("mcp.servers.docs.auth.redirectUri");
    expect(existsSync(sandbox().globalSettings)).toBe(false);
  });

  it("refuses a URL that is not absolute http(s) with exit 1 and no write", async () => {
    const result = await cli("add", "docs", "ftp://files.example.com/mcp");
    expect(result.exitCode).toBe(1);
    expect(result.output).toContain("mcp.servers.docs.url");
    expect(existsSync(sandbox().globalSettings)).toBe(false);
  });

  it("refuses a bad server name with exit 1 and no write", async () => {
    const result = await cli("add", "bad/name", "https://mcp.example.com/mcp");
    expect(result.exitCode).toBe(1);
    expect(result.output).toContain('mcp.servers["bad/name"]');
    expect(existsSync(sandbox().globalSettings)).toBe(false);
  });
});

describe("add (local)", () => {
  it("writes --cwd, --env and --environment and the command line after --", async () => {
    const result = await cli(
      "add",
      "local-docs",
      "--cwd",
      "./tools",
      "--env",
      "A=1",
      "--environment",
      "B=x=y",
      "--",
      "node",
      "./tools/docs-mcp.mjs",
      "--port",
      "0",
    );
    expect(result.exitCode).toBe(0);
    expect(await globalServers()).toEqual({
      "local-docs": { command: "node", args: ["./tools/docs-mcp.mjs", "--port", "0"], cwd: "./tools", environment: { A: "1", B: "x=y" } },
    });
  });

  it("keeps option-like arguments after -- (--help, -l, --json, a second --) as the server's own arguments", async () => {
    const result = await cli("add", "tool", "--", "npx", "-y", "server", "--help", "-l", "--json", "--", "--url", "https://x.example.com");
    expect(result.exitCode).toBe(0);
    expect(await globalServers()).toEqual({
      tool: { command: "npx", args: ["-y", "server", "--help", "-l", "--json", "--", "--url", "https://x.example.com"] },
    });
  });

  it("writes repeated --root as the server's roots, and --no-roots as roots: false, saying so", async () => {
    const result = await cli(
      "add",
      "fs",
      "--root",
      "/srv/data",
      "--root",
      "~/notes",
      "--",
      "npx",
      "-y",
      "@modelcontextprotocol/server-filesystem",
      "/srv/data",
    );
    expect(result.exitCode).toBe(0);
    expect(result.output).toContain("(roots: /srv/data, ~/notes)");
    const remote = await cli("add", "docs", "https://x.example.com/mcp", "--no-roots");
    expect(remote.output).toContain("(roots: none)");
    expect(await globalServers()).toEqual({
      fs: { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "/srv/data"], roots: ["/srv/data", "~/notes"] },
      docs: { url: "https://x.example.com/mcp", roots: false },
    });
  });

  it("writes a bare command without args or environment keys", async () => {
    expect((await cli("add", "bare", "--", "my-server")).exitCode).toBe(0);
    expect(await globalServers()).toEqual({ bare: { command: "my-server" } });
  });
});

describe("add replaces an existing definition", () => {
  it("replaces the whole definition (no field merge) and says so", async () => {
    expect(
      (await cli("add", "docs", "https://old.example.com/mcp", "--header", "X-Old=1", "--auth", "bearer", "--token", "t")).exitCode,
    ).toBe(0);
    const result = await cli("add", "docs", "https://new.example.com/mcp");
    expect(result.exitCode).toBe(0);
    expect(result.output).toMatch(/^Replaced global server "docs"/);
    expect(await globalServers()).toEqual({ docs: { url: "https://new.example.com/mcp" } });
  });

  it("can replace a remote definition with a local one", async () => {
    await cli("add", "docs", "https://old.example.com/mcp");
    expect((await cli("add", "docs", "--", "node", "d.mjs")).exitCode).toBe(0);
    expect(await globalServers()).toEqual({ docs: { command: "node", args: ["d.mjs"] } });
  });
});

describe("remove", () => {
  it("removes the definition and keeps the others", async () => {
    await cli("add", "a", "https://a.example.com/mcp");
    await cli("add", "b", "https://b.example.com/mcp");
    const result = await cli("remove", "a");
    expect(result.exitCode).toBe(0);
    expect(result.output).toMatch(/^Removed global server "a"/);
    expect(await globalServers()).toEqual({ b: { url: "https://b.example.com/mcp" } });
  });

  it("fails with exit 1 for a server that is not defined, naming it, and changes nothing", async () => {
    await cli("add", "a", "https://a.example.com/mcp");
    const before = await sandbox().readText(sandbox().globalSettings);
    const result = await cli("remove", "ghost");
    expect(result.exitCode).toBe(1);
    expect(result.output).toContain('"ghost"');
    expect(result.output.split("\n")).toHaveLength(1);
    expect(await sandbox().readText(sandbox().globalSettings)).toBe(before);
  });

  it("remove -l fails with exit 1 for a server only the global settings define", async () => {
    const box = sandbox();
    await box.trust({ [box.projectDir]: true });
    await cli("add", "g", "https://g.example.com/mcp");
    const result = await cli("remove", "-l", "g");
    expect(result.exitCode).toBe(1);
    expect(await globalServers()).toEqual({ g: { url: "https://g.example.com/mcp" } });
  });
});

describe("enable / disable", () => {
  it("disable writes enabled: false and enable removes it (global scope)", async () => {
    await cli("add", "docs", "https://mcp.example.com/mcp");
    const disabled = await cli("disable", "docs");
    expect(disabled.exitCode).toBe(0);
    expect(disabled.output).toMatch(/^Disabled global server "docs"/);
    expect(await globalServers()).toEqual({ docs: { url: "https://mcp.example.com/mcp", enabled: false } });
    expect(((await cli("list", "--json")).json as { servers: unknown[] }).servers[0]).toMatchObject({ enabled: false, masked: false });
    const enabled = await cli("enable", "docs");
    expect(enabled.exitCode).toBe(0);
    expect(await globalServers()).toEqual({ docs: { url: "https://mcp.example.com/mcp" } });
  });

  it("disable -l of an inherited server writes a project mask and leaves the global definition alone", async () => {
    const box = sandbox();
    await box.trust({ [box.projectDir]: true });
    await cli("add", "docs", "https://mcp.example.com/mcp");
    const result = await cli("disable", "-l", "docs");
    expect(result.exitCode).toBe(0);
    expect(result.output).toMatch(/^Disabled project server "docs"/);
    expect(await projectServers()).toEqual({ docs: { enabled: false } });
    expect(await globalServers()).toEqual({ docs: { url: "https://mcp.example.com/mcp" } });
    expect(((await cli("list", "--json")).json as { servers: unknown[] }).servers).toEqual([
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
  });

  it("disable -l / enable -l of a project definition toggle its enabled field", async () => {
    const box = sandbox();
    await box.trust({ [box.projectDir]: true });
    await cli("add", "-l", "p", "--", "node", "p.mjs");
    expect((await cli("disable", "-l", "p")).exitCode).toBe(0);
    expect(await projectServers()).toEqual({ p: { command: "node", args: ["p.mjs"], enabled: false } });
    expect((await cli("enable", "-l", "p")).exitCode).toBe(0);
    expect(await projectServers()).toEqual({ p: { command: "node", args: ["p.mjs"] } });
  });

  it("enable of a server defined nowhere fails with exit 1; disable -l of an unknown server writes no mask", async () => {
    const box = sandbox();
    await box.trust({ [box.projectDir]: true });
    expect((await cli("enable", "ghost")).exitCode).toBe(1);
    expect((await cli("disable", "ghost")).exitCode).toBe(1);
    expect((await cli("disable", "-l", "ghost")).exitCode).toBe(1);
    expect(existsSync(box.projectSettings) ? await projectServers() : {}).toEqual({});
  });

  it("enable -l of an inherited server that the project does not mention fails with exit 1 and writes nothing", async () => {
    const box = sandbox();
    await box.trust({ [box.projectDir]: true });
    await cli("add", "docs", "https://mcp.example.com/mcp");
    const result = await cli("enable", "-l", "docs");
    expect(result.exitCode).toBe(1);
    expect(existsSync(box.projectSettings) ? await projectServers() : {}).toEqual({});
  });
});

describe("usage errors exit 2 and write nothing", () => {
  it.each([
    ["add without a name", ["add"]],
    ["remove without a name", ["remove"]],
    ["enable without a name", ["enable"]],
    ["add with neither a url nor a command", ["add", "docs"]],
    ["add with an empty command after --", ["add", "docs", "--"]],
    ["an unknown flag", ["add", "docs", "https://x.example.com", "--bogus"]],
    ["an unknown short flag", ["list", "-z"]],
    ["--token with --auth oauth", ["add", "docs", "https://x.example.com", "--auth", "oauth", "--token", "t"]],
    ["--client-id with --auth bearer", ["add", "docs", "https://x.example.com", "--auth", "bearer", "--token", "t", "--client-id", "c"]],
    ["--auth bearer without --token", ["add", "docs", "https://x.example.com", "--auth", "bearer"]],
    ["-- together with a url", ["add", "docs", "https://x.example.com", "--", "node"]],
    ["--cwd on a remote server", ["add", "docs", "https://x.example.com", "--cwd", "."]],
    ["--env on a remote server", ["add", "docs", "https://x.example.com", "--env", "A=b"]],
    ["--header on a local server", ["add", "docs", "--header", "A=b", "--", "node"]],
    ["--auth on a local server", ["add", "docs", "--auth", "none", "--", "node"]],
    ["--transport on a local server", ["add", "docs", "--transport", "sse", "--", "node"]],
    ["--header without NAME=VALUE", ["add", "docs", "https://x.example.com", "--header", "X-A"]],
    ["--env without NAME=VALUE", ["add", "docs", "--env", "=v", "--", "node"]],
    ["an extra positional argument", ["remove", "a", "b"]],
    ["-- on a command that takes no command line", ["remove", "a", "--", "x"]],
    ["a string option without its value", ["add", "docs", "https://x.example.com", "--token"]],
    ["--root together with --no-roots", ["add", "docs", "--root", "/a", "--no-roots", "--", "node"]],
    ["an unknown command", ["frobnicate"]],
    ["no command at all", []],
  ])("%s", async (_, argv) => {
    const result = await cli(...argv);
    expect(result.exitCode).toBe(2);
    expect(result.output.length).toBeGreaterThan(0);
    expect(existsSync(sandbox().globalSettings)).toBe(false);
  });

  it("a usage error names the command and shows its usage", async () => {
    const result = await cli("add", "docs", "https://x.example.com", "--auth", "oauth", "--token", "t");
    expect(result.output).toMatch(/^add: /);
    expect(result.output).toContain("Usage:\n  pi-mcp add [-l] <name> <url>");
  });
});

describe("list", () => {
  it("--json has exactly the keys valid, errors[{path,message}], servers[{name,scope,enabled,masked,transport,auth,storedAuth,exposure,definitionTokens}]", async () => {
    const box = sandbox();
    await box.writeJson(box.globalSettings, {
      mcp: {
        servers: {
          local: { command: "node" },
          remote: { url: "https://x.example.com", auth: { type: "oauth" } },
          legacy: { url: "https://x.example.com/sse", transport: "sse", auth: { type: "bearer", token: "t0k3n-literal" } },
          broken: { url: "ftp://x" },
        },
        unknownTopLevel: true,
      },
    });
    const result = await cli("list", "--json");
    expect(result.exitCode).toBe(0);
    const document = result.json as Record<string, unknown>;
    expect(Object.keys(document).sort()).toEqual(["errors", "servers", "valid"]);
    expect(document.valid).toBe(false);
    const errors = document.errors as Record<string, unknown>[];
    expect(errors.map((error) => error.path).sort()).toEqual(["mcp.servers.broken.url", "mcp.unknownTopLevel"]);
    for (const error of errors) {
      expect(Object.keys(error).sort()).toEqual(["message", "path"]);
      expect(typeof error.message).toBe("string");
    }
    expect(document.servers).toEqual([
      {
        name: "broken",
        scope: "global",
        enabled: true,
        masked: false,
        transport: "http",
        auth: "oauth-on-demand",
        storedAuth: false,
        exposure: "auto",
        definitionTokens: null,
      },
      {
        name: "legacy",
        scope: "global",
        enabled: true,
        masked: false,
        transport: "sse",
        auth: "bearer",
        storedAuth: false,
        exposure: "auto",
        definitionTokens: null,
      },
      {
        name: "local",
        scope: "global",
        enabled: true,
        masked: false,
        transport: "stdio",
        auth: "none",
        storedAuth: false,
        exposure: "auto",
        definitionTokens: null,
      },
      {
        name: "remote",
        scope: "global",
        enabled: true,
        masked: false,
        transport: "http",
        auth: "oauth",
        storedAuth: false,
        exposure: "auto",
        definitionTokens: null,
      },
    ]);
    for (const server of document.servers as Record<string, unknown>[]) {
      expect(Object.keys(server).sort()).toEqual(LIST_JSON_SERVER_KEYS);
    }
    expect(JSON.stringify(document)).not.toContain("t0k3n-literal");
  });

  it("exits 0 for invalid settings and prints the errors in text form", async () => {
    const box = sandbox();
    await box.writeJson(box.globalSettings, { mcp: { servers: { x: {} } } });
    const result = await cli("list");
    expect(result.exitCode).toBe(0);
    expect(result.output).toContain("mcp.servers.x");
    expect(result.output).toMatch(/invalid/);
  });

  it("says so when no server is configured, and lists a valid empty config as valid", async () => {
    const text = await cli("list");
    expect(text.exitCode).toBe(0);
    expect(text.output).toContain("No MCP servers are configured.");
    expect((await cli("list", "--json")).json).toEqual({ valid: true, errors: [], servers: [] });
  });

  it("text output strips terminal controls from server names taken from settings (CSI, OSC, C1)", async () => {
    const box = sandbox();
    const evil = "evil\u001b[2J\u001b]0;pwned\u0007\u009b31m";
    await box.writeJson(box.globalSettings, { mcp: { servers: { [evil]: { command: "node" }, ok: { command: "node" } } } });
    const result = await cli("list");
    expect(result.exitCode).toBe(0);
    expect(result.output).toContain("mcp.servers["); // the bad name is reported
    expect(result.output).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
  });

  it("text output shows name, scope, state, transport and auth per server", async () => {
    await cli("add", "docs", "https://x.example.com/mcp", "--auth", "oauth");
    await cli("add", "loc", "--", "node");
    await cli("disable", "loc");
    const result = await cli("list");
    expect(result.output).toMatch(/docs\s+global\s+enabled\s+http\s+oauth\s+no/);
    expect(result.output).toMatch(/loc\s+global\s+disabled\s+stdio\s+none\s+no/);
  });

  it("shows each server's roots: cwd by default, none for roots: false, the resolved folders otherwise", async () => {
    const box = sandbox();
    await cli("add", "plain", "--", "node");
    await cli("add", "declines", "--no-roots", "--", "node");
    await cli("add", "own", "--root", "data", "--root", "/srv", "--", "node");
    const result = await cli("list");
    expect(result.output).toMatch(/ROOTS/);
    expect(result.output).toMatch(/plain\s+global\s+enabled\s+stdio\s+none\s+no\s+auto\s+\?\s+cwd\s+node$/m);
    expect(result.output).toMatch(/declines\s+.*auto\s+\?\s+none\s+node$/m);
    expect(result.output).toContain(`own`);
    expect(result.output).toMatch(new RegExp(`own\\s+.*auto\\s+\\?\\s+${box.projectDir}/data,/srv\\s+node$`, "m"));
  });
});

describe("the Pi surface (hand-built CommandEnvironment)", () => {
  it("rejects the standalone-only list --json and --approve as usage errors", async () => {
    const { env } = piEnvironment(sandbox());
    const commands = surfaceCommands("pi");
    expect((await runCommandLine(commands, ["list", "--json"], env)).exitCode).toBe(2);
    expect((await runCommandLine(commands, ["add", "-a", "x", "https://x.example.com"], env)).exitCode).toBe(2);
    expect((await runCommandLine(commands, ["list"], env)).exitCode).toBe(0);
  });

  it("logout --all --force in Pi replaces only clients that may use OAuth: local and bearer servers keep running", async () => {
    const box = sandbox();
    await box.writeJson(box.globalSettings, {
      mcp: {
        servers: {
          local: { command: "node" },
          bearer: { url: "https://b.example.com/mcp", auth: { type: "bearer", token: "t0ken-value" } },
          anonymous: { url: "https://n.example.com/mcp", auth: { type: "none" } },
          discovered: { url: "https://d.example.com/mcp" },
          oauth: { url: "https://o.example.com/mcp", auth: { type: "oauth" } },
        },
      },
    });
    const config = await loadConfig({ agentDir: box.agentDir, cwd: box.projectDir, projectTrusted: false, env: box.env() });
    const reconnected: string[] = [];
    const { env } = piEnvironment(box);
    const runtime = {
      ...env.runtime!,
      status: async () => ({
        config,
        servers: config.servers.map((entry) => ({ name: entry.name, state: "connected" as const })) as never,
      }),
      reconnect: async (name: string) => void reconnected.push(name),
    };
    const result = await runCommandLine(surfaceCommands("pi"), ["logout", "--all", "--force"], { ...env, runtime });
    expect(result.exitCode, result.output).toBe(0);
    expect(reconnected.sort()).toEqual(["discovered", "oauth"]);
  });

  it("/mcp get fits Pi's notices in an 80-column terminal (78 columns), the program's get 80; a URL longer than the room stays whole", async () => {
    const box = sandbox();
    const long = "https://mcp.example.com/a/rather/long/path/that/goes/on/and/on/and/on/and/on/mcp";
    const workspace = "${WORKSPACE_ID} and a long explanation of what it is for, in words that go on";
    await box.writeJson(box.globalSettings, { mcp: { servers: { docs: { url: long, headers: { "X-Workspace": workspace } } } } });
    const { env } = piEnvironment(box);
    const runtime = { ...env.runtime!, status: async () => ({ config: undefined as never, servers: [] }) };
    const inPi = await runCommandLine(surfaceCommands("pi"), ["get", "docs"], { ...env, runtime });
    const standalone = await runCli(["get", "docs"], box.projectDir, box.env());
    for (const [result, width] of [
      [inPi, 78],
      [standalone, 80],
    ] as const) {
      expect(result.exitCode, result.output).toBe(0);
      const lines = result.output.split("\n");
      expect(lines).toContain(`  url:         ${long}`);
      const header = lines.slice(
        lines.findIndex((line) => line.startsWith("  headers:")),
        lines.findIndex((line) => line.startsWith("  auth:")),
      );
      expect(header.length, header.join("\n")).toBeGreaterThan(1);
      for (const line of header) expect(line.length, line).toBeLessThanOrEqual(width);
      expect(header.map((line) => line.trim()).join(" ")).toBe(`headers:     X-Workspace: ${workspace}`);
    }
    // The same header, wrapped by each surface's width.
    expect(inPi.output).not.toBe(standalone.output);
  });

  it("help and usage errors show only the options of their surface", async () => {
    const { env } = piEnvironment(sandbox());
    const commands = surfaceCommands("pi");
    const wrong = await runCommandLine(commands, ["list", "--json"], env);
    expect(wrong.output).toMatch(/usage: list$/);
    const all = commandsFor("pi", runtimeCommands());
    const help = await runCommandLine([...all, helpCommand(() => all)], ["help"], env);
    expect(help.output).toContain("/mcp list\n");
    expect(help.output).toContain("/mcp test <server> | --all\n");
    expect(help.output).not.toContain("--json");
    expect((await cli("list", "--bogus")).output).toMatch(/^Usage:\n {2}pi-mcp list \[--json\]\n/m);
  });

  it("add persists first and then asks the runtime to connect; remove persists first and then disconnects", async () => {
    const box = sandbox();
    const { env, events } = piEnvironment(box);
    const commands = surfaceCommands("pi");
    expect((await runCommandLine(commands, ["add", "docs", "https://x.example.com/mcp"], env)).exitCode).toBe(0);
    expect((await runCommandLine(commands, ["disable", "docs"], env)).exitCode).toBe(0);
    expect((await runCommandLine(commands, ["enable", "docs"], env)).exitCode).toBe(0);
    expect((await runCommandLine(commands, ["remove", "docs"], env)).exitCode).toBe(0);
    const definition = '{"url":"https://x.example.com/mcp"}';
    expect(events).toEqual([
      `connect docs ${definition}`,
      'disconnect docs {"url":"https://x.example.com/mcp","enabled":false}',
      `connect docs ${definition}`,
      "disconnect docs null",
    ]);
  });

  it("a failed mutation does not notify the runtime", async () => {
    const { env, events } = piEnvironment(sandbox());
    expect((await runCommandLine(surfaceCommands("pi"), ["remove", "ghost"], env)).exitCode).toBe(1);
    expect((await runCommandLine(surfaceCommands("pi"), ["add", "x", "ftp://x"], env)).exitCode).toBe(1);
    expect(events).toEqual([]);
  });

  it("list reports stored-auth presence from the credential store", async () => {
    const box = sandbox();
    const { env } = piEnvironment(box, { stored: ["docs"] });
    await box.writeJson(box.globalSettings, {
      mcp: { servers: { docs: { url: "https://x.example.com", auth: { type: "oauth" } }, other: { command: "n" } } },
    });
    const result = await runCommandLine(surfaceCommands("pi"), ["list"], env);
    expect(result.output).toMatch(/docs\s+global\s+enabled\s+http\s+oauth\s+yes/);
    expect(result.output).toMatch(/other\s+global\s+enabled\s+stdio\s+none\s+no/);
  });

  it("remove --logout also removes stored credentials and says whether there were any", async () => {
    const box = sandbox();
    const { env, events } = piEnvironment(box, { stored: ["a"] });
    const commands = surfaceCommands("pi");
    await runCommandLine(commands, ["add", "a", "https://a.example.com"], env);
    await runCommandLine(commands, ["add", "b", "https://b.example.com"], env);
    const a = await runCommandLine(commands, ["remove", "--logout", "a"], env);
    const b = await runCommandLine(commands, ["remove", "--logout", "b"], env);
    expect(a.output).toContain("and its stored credentials");
    expect(b.output).toContain("had no stored credentials");
    expect(events.filter((event) => event.startsWith("logout"))).toEqual(["logout a", "logout b"]);
  });

  it("-l on the Pi surface follows Pi's saved trust", async () => {
    const box = sandbox();
    const trusted = piEnvironment(box, { savedTrust: true });
    expect((await runCommandLine(surfaceCommands("pi"), ["add", "-l", "p", "--", "node"], trusted.env)).exitCode).toBe(0);
    expect(await projectServers()).toEqual({ p: { command: "node" } });
    const untrusted = piEnvironment(box, { savedTrust: null });
    const result = await runCommandLine(surfaceCommands("pi"), ["add", "-l", "q", "--", "node"], untrusted.env);
    expect(result.exitCode).toBe(1);
    expect(result.output).toMatch(/trust/);
    expect(await projectServers()).toEqual({ p: { command: "node" } });
  });
});
