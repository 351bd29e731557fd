/**
 * Footer health and MCP Attention Notices: what the TUI footer says, that it
 * is redrawn only when its text changes, that each condition needing a
 * command is announced once (not per retry or reload), and that print, JSON
 * and RPC modes get none of it.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { EffectiveConfig } from "../../src/kernel/settings.ts";
import type { ConnectionState, ConnectionStatus } from "../../src/kernel/status.ts";
import { createRedactor } from "../../src/safety/text.ts";
import { FOOTER_STATUS_KEY, HealthObserver, resetAttentionMemory, type ObservedHost } from "../../plugins/observer/pi.ts";
import { footerText, healthOf } from "../../plugins/observer/health.ts";
import { buildConfig } from "../helpers/host.ts";

const SECRET = "observer-secret-9931";
const stdio = (extra: Record<string, unknown> = {}) => ({ command: "node", args: ["server.mjs"], ...extra });

function config(): EffectiveConfig {
  return buildConfig(
    {
      a: stdio(),
      b: stdio(),
      c: stdio(),
      d: stdio(),
      off: stdio({ enabled: false }),
      tokened: stdio({ environment: { TOKEN: "${OBS_SECRET}" } }),
    },
    { env: { OBS_SECRET: SECRET } },
  );
}

const GLOBAL = "/home/me/.pi/agent/settings.json";
const PROJECT = "/project/.pi/settings.json";
const sources = { globalPath: GLOBAL, projectPath: PROJECT, projectTrusted: true };
const invalid = {
  valid: false,
  issues: [{ path: "mcp.servers.x.url", message: "must be an absolute http:// or https:// URL", file: GLOBAL }],
  servers: [],
  secrets: new Set<string>(),
  sources,
} as unknown as EffectiveConfig;

function status(name: string, state: ConnectionState, cause?: string): ConnectionStatus {
  return { name, state, attempts: state === "retrying" ? 1 : 0, tools: 0, ...(cause && { cause }) } as ConnectionStatus;
}

/** A host whose statuses the test sets, and a Pi UI that records what it was asked to show. */
function fixture(mode: "tui" | "rpc" | "json" | "print" = "tui", cwd = "/project") {
  const calls = { status: [] as (string | undefined)[], notices: [] as { text: string; level: string }[] };
  let statuses: ConnectionStatus[] = [];
  const host: ObservedHost & { config: EffectiveConfig } = {
    config: config(),
    get context() {
      return { redact: createRedactor(host.config.secrets) } as never;
    },
    status: () => statuses,
  };
  const ctx = {
    mode,
    hasUI: mode === "tui" || mode === "rpc",
    cwd,
    ui: {
      setStatus: (key: string, text: string | undefined) => {
        expect(key).toBe(FOOTER_STATUS_KEY);
        calls.status.push(text);
      },
      notify: (text: string, level: string) => void calls.notices.push({ text, level }),
    },
  };
  const observer = (): HealthObserver => new HealthObserver(ctx as never, host);
  return {
    host,
    calls,
    observer,
    set(next: ConnectionStatus[]) {
      statuses = next;
    },
  };
}

afterEach(() => resetAttentionMemory());

describe("the footer", () => {
  it("shows connected/enabled, with connecting and retrying as busy, auth states as auth, terminal failures as failed", () => {
    const c = config();
    expect(footerText(healthOf(c, []))).toBe("MCP 0/5 · 5 busy");
    expect(
      footerText(
        healthOf(c, [
          status("a", "connected"),
          status("b", "retrying"),
          status("c", "needs_auth"),
          status("d", "needs_client_registration"),
          status("tokened", "failed"),
          status("off", "disabled"),
        ]),
      ),
    ).toBe("MCP 1/5 · 1 busy · 2 auth · 1 failed");
    expect(
      footerText(
        healthOf(
          c,
          ["a", "b", "c", "d", "tokened"].map((name) => status(name, "connected")),
        ),
      ),
    ).toBe("MCP 5/5");
    expect(footerText(healthOf(buildConfig({}), []))).toBe("MCP 0/0");
    expect(footerText(healthOf(invalid, []))).toBe("MCP 0/0 · invalid settings");
  });

  it("ends with the estimated tokens of the MCP tool definitions declared in every request, once a catalog is offered", () => {
    const c = config();
    const placed = (name: string, declared: number): ConnectionStatus => ({
      ...status(name, "connected"),
      context: { tokens: declared + 500, declared, setting: "auto", exposure: "direct", auto: "direct" },
    });
    expect(footerText(healthOf(c, [placed("a", 800), status("b", "connected")]))).toBe("MCP 2/5 · 3 busy · ≈800 tok");
    expect(footerText(healthOf(c, [placed("a", 2_400), placed("b", 3_700)]))).toBe("MCP 2/5 · 3 busy · ≈6.1k tok");
    expect(footerText(healthOf(c, [placed("a", 14_000)]))).toBe("MCP 1/5 · 4 busy · ≈14k tok");
  });

  it("counts lazy servers that are not running as lazy, not as busy or connected", () => {
    const c = config();
    expect(
      footerText(
        healthOf(c, [
          status("a", "idle"),
          status("b", "idle"),
          status("c", "connected"),
          status("d", "connecting"),
          status("tokened", "connected"),
        ]),
      ),
    ).toBe("MCP 2/5 · 1 busy · 2 lazy");
  });

  it("is set only when its text changes", () => {
    const f = fixture();
    const observer = f.observer();
    f.set(["a", "b", "c", "d", "tokened"].map((name) => status(name, "connecting")));
    observer.update();
    observer.update();
    f.set([status("a", "connected"), ...["b", "c", "d", "tokened"].map((name) => status(name, "connecting"))]);
    observer.update();
    observer.update();
    f.set([status("a", "connected"), ...["b", "c", "d", "tokened"].map((name) => status(name, "retrying"))]); // same groups, same text
    observer.update();
    expect(f.calls.status).toEqual(["MCP 0/5 · 5 busy", "MCP 1/5 · 4 busy"]);
  });
});

describe("Attention Notices", () => {
  it("announces a terminal failure once, not again for its retries, reconnects or a reload", () => {
    const f = fixture();
    const first = f.observer();
    f.set([status("a", "failed", `spawn \u001b[31mfailed\u001b[0m with ${SECRET}`)]);
    first.update();
    expect(f.calls.notices).toEqual([
      {
        level: "error",
        text: 'MCP server "a" failed: spawn failed with ‹redacted›. Run /mcp status for details, /mcp reconnect a to try again.',
      },
    ]);
    for (const state of ["connecting", "retrying", "failed", "retrying", "failed"] as const) {
      f.set([status("a", state, "again")]);
      first.update();
    }
    first.stop();
    // /reload: a new session's observer, same process and project.
    const second = f.observer();
    f.set([status("a", "connecting")]);
    second.update();
    f.set([status("a", "failed", "still")]);
    second.update();
    expect(f.calls.notices).toHaveLength(1);
    // It connected in between: a later failure is a new condition.
    f.set([status("a", "connected")]);
    second.update();
    f.set([status("a", "failed", "crashed")]);
    second.update();
    expect(f.calls.notices).toHaveLength(2);
  });

  it("announces authentication and client registration, each once", () => {
    const f = fixture();
    const observer = f.observer();
    f.set([status("b", "needs_auth"), status("c", "needs_client_registration")]);
    observer.update();
    observer.update();
    f.set([status("b", "connecting"), status("c", "needs_client_registration")]);
    observer.update();
    f.set([status("b", "needs_auth"), status("c", "needs_client_registration")]);
    observer.update();
    expect(f.calls.notices).toEqual([
      { level: "warning", text: 'MCP server "b" needs authentication: run /mcp auth b.' },
      {
        level: "warning",
        text: 'MCP server "c" needs a registered OAuth client: set auth.clientId for it (/mcp add, see /mcp status), then run /mcp auth c.',
      },
    ]);
  });

  it("announces invalid settings once, until they change", () => {
    const f = fixture();
    f.host.config = invalid;
    f.observer().update();
    f.observer().update(); // a reload with the same broken settings
    expect(f.calls.notices).toEqual([
      {
        level: "error",
        text: `MCP is disabled: the settings have 1 problem, in ${GLOBAL}. Run /mcp status (or pi-mcp list) to see it, then fix it there.`,
      },
    ]);
    expect(f.calls.status).toEqual(["MCP 0/0 · invalid settings", "MCP 0/0 · invalid settings"]);
    f.host.config = config();
    f.observer().update();
    f.host.config = invalid;
    f.observer().update();
    expect(f.calls.notices).toHaveLength(2);
  });

  it("names every settings file that holds a problem", () => {
    const f = fixture();
    f.host.config = {
      ...invalid,
      issues: [
        { path: "mcp.servers.x.url", message: "must be an absolute http:// or https:// URL", file: GLOBAL },
        { path: "mcp.retry.maxRetries", message: "must be an integer", file: PROJECT },
        { path: "mcp.servers.y.environment.T", message: "environment variable T is not set", file: PROJECT },
      ],
    } as EffectiveConfig;
    f.observer().update();
    expect(f.calls.notices).toEqual([
      {
        level: "error",
        text: `MCP is disabled: the settings have 3 problems, in ${GLOBAL} and ${PROJECT}. Run /mcp status (or pi-mcp list) to see them, then fix them there.`,
      },
    ]);
  });

  it("shows nothing in print, JSON and RPC modes", () => {
    for (const mode of ["print", "json", "rpc"] as const) {
      const f = fixture(mode, `/project-${mode}`);
      const observer = f.observer();
      f.set([status("a", "failed", "x"), status("b", "needs_auth")]);
      observer.update();
      f.host.config = invalid;
      observer.update();
      expect(f.calls).toEqual({ status: [], notices: [] });
    }
  });

  it("shows nothing through a session that ended", () => {
    const f = fixture();
    const observer = f.observer();
    observer.stop();
    f.set([status("a", "failed", "x")]);
    observer.update();
    expect(f.calls).toEqual({ status: [], notices: [] });
  });
});
