/**
 * `/mcp status` as the TUI shows it (a notice padded by one column on each
 * side): every line fits 80 columns, long causes wrap with an indent, and
 * server-provided causes arrive clean and redacted.
 */
import { afterEach, describe, expect, it } from "vitest";
import { join } from "node:path";
import type { EffectiveConfig } from "../../src/kernel/settings.ts";
import { formatStatus, wrapColumns } from "../../src/commands/runtime.ts";
import type { ConnectionStatus } from "../../src/kernel/status.ts";
import { buildConfig, fixtureServer, startHost, stopAllHosts } from "../helpers/host.ts";
import { nodePath } from "../helpers/servers.ts";

const SECRET = "status-secret-1357";
const CONTROLS = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;
const fits = (text: string) => text.split("\n").every((line) => line.length <= 78);

afterEach(() => stopAllHosts());

describe("/mcp status at 80 columns", () => {
  it("wraps long lines at a space with a hanging indent, keeping every word", () => {
    const config = buildConfig({
      "a-server-with-a-rather-long-name": fixtureServer("basic"),
      slow: fixtureServer("basic"),
      docs: fixtureServer("basic"),
    });
    const now = Date.now();
    const cause = `the server said: ${Array.from({ length: 40 }, (_, i) => `word${i}`).join(" ")} and a path /a/b/c`;
    // (Statuses carry more fields than the report reads; `exposures` is counted per exposure.)
    const base = { attempts: 0, tools: 0, exposures: {} } as unknown as ConnectionStatus;
    const servers: ConnectionStatus[] = [
      {
        ...base,
        name: "a-server-with-a-rather-long-name",
        state: "connected",
        tools: 12,
        protocolVersion: "2025-11-25",
        connectedAt: now - 5_000,
        reusedAt: now - 1_000,
      },
      { ...base, name: "slow", state: "retrying", attempts: 2, nextRetryAt: now + 3_000, cause },
      { ...base, name: "docs", state: "failed", attempts: 3, cause: "short cause" },
    ];
    const text = formatStatus(config, servers);
    expect(fits(text)).toBe(true);
    expect(text).toContain(
      "a-server-with-a-rather-long-name: connected, 12 tools, protocol 2025-11-25,\n  reused from an earlier session, connected 5 s ago",
    );
    expect(text).toContain("slow: retrying, attempt 2, next retry in 3 s\n  cause: the server said: word0");
    expect(text.split("\n").filter((line) => line.startsWith("    word")).length).toBeGreaterThan(1); // the cause's continuation lines
    expect(text.replace(/\n\s+/g, " ")).toContain(`cause: ${cause}`);
    expect(text).toContain("docs: failed, attempt 3\n  cause: short cause");
  });

  it("reports invalid settings separately from an empty configuration, wrapped", () => {
    const invalid = {
      valid: false,
      issues: [
        {
          path: "mcp.servers.remote-docs.auth.type",
          message: `must be "bearer", "none" or "oauth" (was "basic"), and this message goes on for a good while longer`,
        },
      ],
      servers: [],
      secrets: new Set(),
    } as unknown as EffectiveConfig;
    const text = formatStatus(invalid, []);
    expect(text.split("\n")[0]).toBe("MCP is disabled: the settings are invalid.");
    expect(fits(text)).toBe(true);
    expect(formatStatus(buildConfig({}), [])).toBe("No MCP servers are configured.");
  });

  it("leaves short lines alone and never loops on unbreakable text", () => {
    expect(wrapColumns(["short", "  indented"])).toEqual(["short", "  indented"]);
    const lines = wrapColumns([`  cause: ${"y".repeat(200)}`]);
    expect(lines.every((line) => line.length <= 78)).toBe(true);
    expect(lines.join("").replace(/\s/g, "")).toBe(`cause:${"y".repeat(200)}`);
  });

  it("shows a server's escape-laden failure clean and redacted", async () => {
    const hostile = join(import.meta.dirname, "fixtures/hostile.mjs");
    const h = await startHost(
      { broken: { command: nodePath(), args: [hostile], environment: { TOKEN: "${STATUS_SECRET}", FIXTURE_FAIL_INIT: "1" } } },
      { retry: { maxRetries: 0 }, env: { ...process.env, STATUS_SECRET: SECRET } },
    );
    await h.waitForState("broken", "failed");
    const text = formatStatus(h.config, h.host.status());
    expect(text).toContain("broken: failed, attempt 1\n  cause: cannot start now! (token ‹redacted›)");
    expect(text).not.toContain(SECRET);
    expect(text).not.toMatch(CONTROLS);
    expect(fits(text)).toBe(true);
  });
});
