/**
 * The built `pi-mcp` binary (dist/cli/index.mjs) end to end, as real
 * processes with PI_CODING_AGENT_DIR pointing at a temporary agent folder.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { CLI_BIN, createSandbox, nodeBinary, runProcess, type Sandbox } from "../helpers/tmp.ts";

function piMcp(box: Sandbox, args: readonly string[], options: { env?: Record<string, string>; cwd?: string } = {}) {
  return runProcess(nodeBinary(), [CLI_BIN, ...args], { cwd: options.cwd ?? box.projectDir, env: box.env(options.env) });
}

/** Runs `body` with its own sandbox, removed afterwards. */
async function withSandbox(body: (box: Sandbox) => Promise<void>): Promise<void> {
  const box = await createSandbox();
  try {
    await body(box);
  } finally {
    await box.cleanup();
  }
}

const SECRET = "s3cr3t-value-XYZ";

describe("pi-mcp (built binary)", () => {
  it("--help exits 0 and lists every command", () =>
    withSandbox(async (box) => {
      const result = await piMcp(box, ["--help"]);
      expect(result.code).toBe(0);
      for (const command of ["list", "add", "remove", "enable", "disable"]) expect(result.stdout).toContain(command);
      expect(existsSync(box.globalSettings)).toBe(false);
    }));

  it("add / list --json / remove round trip (remote and local), writing only mcp", () =>
    withSandbox(async (box) => {
      await box.writeJson(box.globalSettings, { theme: "dark", mcp: { requestTimeoutMs: 5_000 } });
      const [remote, local] = await Promise.all([
        piMcp(box, [
          "add",
          "docs",
          "https://mcp.example.com/mcp",
          "--header",
          "X-Workspace=${WS}",
          "--auth",
          "oauth",
          "--scope",
          "tools.read",
        ]),
        // `--help` after `--` is the server's argument, not a help request.
        piMcp(box, ["add", "local-docs", "--env", "TOKEN=${TOKEN}", "--", "node", "server.mjs", "--help"]),
      ]);
      expect(remote.code, remote.stderr).toBe(0);
      expect(remote.stdout).toContain('Added global server "docs"');
      expect(local.code, local.stderr).toBe(0);
      expect(local.stdout).toContain('Added global server "local-docs"');
      expect(await box.readJson(box.globalSettings)).toEqual({
        theme: "dark",
        mcp: {
          requestTimeoutMs: 5_000,
          servers: {
            docs: {
              url: "https://mcp.example.com/mcp",
              headers: { "X-Workspace": "${WS}" },
              auth: { type: "oauth", scopes: ["tools.read"] },
            },
            "local-docs": { command: "node", args: ["server.mjs", "--help"], environment: { TOKEN: "${TOKEN}" } },
          },
        },
      });

      const listed = await piMcp(box, ["list", "--json"], { env: { WS: "w", TOKEN: "t" } });
      expect(listed.code).toBe(0);
      expect(JSON.parse(listed.stdout)).toEqual({
        valid: true,
        errors: [],
        servers: [
          {
            name: "docs",
            scope: "global",
            enabled: true,
            masked: false,
            transport: "http",
            auth: "oauth",
            storedAuth: false,
            exposure: "auto",
            definitionTokens: null,
          },
          {
            name: "local-docs",
            scope: "global",
            enabled: true,
            masked: false,
            transport: "stdio",
            auth: "none",
            storedAuth: false,
            exposure: "auto",
            definitionTokens: null,
          },
        ],
      });

      const [removeDocs, removeLocal] = await Promise.all([piMcp(box, ["remove", "docs"]), piMcp(box, ["remove", "local-docs"])]);
      expect([removeDocs.code, removeLocal.code]).toEqual([0, 0]);
      expect(removeDocs.stdout).toContain('Removed global server "docs"');
      expect(await box.readJson(box.globalSettings)).toEqual({ theme: "dark", mcp: { requestTimeoutMs: 5_000, servers: {} } });
    }));

  it("an unknown command exits 2 with the command list on stderr", () =>
    withSandbox(async (box) => {
      const result = await piMcp(box, ["frobnicate"]);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe("");
      expect(result.stderr).toContain("frobnicate");
      expect(result.stderr).toContain("add");
    }));

  it("a usage error exits 2 with the problem and usage on stderr, and writes nothing", () =>
    withSandbox(async (box) => {
      const result = await piMcp(box, ["add", "docs", "https://mcp.example.com/mcp", "--auth", "oauth", "--token", "t"]);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe("");
      expect(result.stderr).toMatch(/^add: /);
      expect(result.stderr).toContain("Usage:\n  pi-mcp ");
      expect(existsSync(box.globalSettings)).toBe(false);
    }));

  it("a failure exits 1 with a one-line reason on stderr (remove of an unknown server)", () =>
    withSandbox(async (box) => {
      const result = await piMcp(box, ["remove", "ghost"]);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe("");
      expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);
      expect(result.stderr).toContain("ghost");
    }));

  it("a malformed settings file makes add exit 1 with a one-line reason and stay byte-for-byte untouched", () =>
    withSandbox(async (box) => {
      await box.writeText(box.globalSettings, '{ "theme": "dark", ');
      const before = await readFile(box.globalSettings);
      const result = await piMcp(box, ["add", "docs", "https://mcp.example.com/mcp"]);
      expect(result.code).toBe(1);
      expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);
      expect(result.stderr).toMatch(/not valid JSON/);
      expect((await readFile(box.globalSettings)).equals(before)).toBe(true);
    }));

  it("-a allows -l without saved trust; -na refuses -l despite saved trust", () =>
    withSandbox(async (box) => {
      const approved = await piMcp(box, ["add", "-l", "-a", "p", "--", "node"]);
      expect(approved.code, approved.stderr).toBe(0);
      expect(await box.readJson(box.projectSettings)).toEqual({ mcp: { servers: { p: { command: "node" } } } });
      await box.trust({ [box.projectDir]: true });
      const denied = await piMcp(box, ["remove", "-l", "-na", "p"]);
      expect(denied.code).toBe(1);
      expect(await box.readJson(box.projectSettings)).toEqual({ mcp: { servers: { p: { command: "node" } } } });
    }));

  it("list (text and --json) never prints a resolved value, even in errors", () =>
    withSandbox(async (box) => {
      await box.writeJson(box.globalSettings, {
        mcp: {
          servers: {
            bad: { url: "${BAD_URL}", headers: { Authorization: "${AUTH}" }, auth: { type: "bearer", token: "${TOKEN}" } },
            good: { url: "https://mcp.example.com/mcp", headers: { "X-Key": "${TOKEN}" } },
          },
        },
      });
      const env = { BAD_URL: `ftp://${SECRET}/mcp`, AUTH: `Bearer ${SECRET}`, TOKEN: SECRET };
      const [text, json] = await Promise.all([piMcp(box, ["list"], { env }), piMcp(box, ["list", "--json"], { env })]);
      expect([text.code, json.code]).toEqual([0, 0]);
      expect(text.stdout).toContain("mcp.servers.bad.url");
      expect(
        JSON.parse(json.stdout)
          .errors.map((error: { path: string }) => error.path)
          .sort(),
      ).toEqual(["mcp.servers.bad.auth", "mcp.servers.bad.url"]);
      for (const output of [text.stdout, text.stderr, json.stdout, json.stderr]) expect(output).not.toContain(SECRET);
    }));
});
