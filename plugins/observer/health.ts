/*
 * Server health as the observer shows it: the footer's connected/enabled
 * ratio with its groups, and the conditions that need a person to run a
 * command (MCP Attention Notices). Pure: the Pi side decides where it goes.
 */
import type { EffectiveConfig } from "../../src/kernel/settings.ts";
import type { Redactor } from "../../src/kernel/types.ts";
import type { ConnectionState, ConnectionStatus } from "../../src/kernel/status.ts";
import { safeHead, safeText } from "../../src/safety/text.ts";

export interface Health {
  readonly valid: boolean;
  readonly enabled: number;
  readonly connected: number;
  /** Connecting or retrying (or not started yet). */
  readonly busy: number;
  /** Needs authentication or a registered OAuth client. */
  readonly auth: number;
  /** Failed for good: it waits for a command. */
  readonly failed: number;
  /** Lazy servers that are not running (they start when one of their tools is called). */
  readonly idle: number;
  /** The estimated tokens of the MCP tool definitions declared in every request (src/runtime/context-budget.ts), once a catalog is offered. */
  readonly declaredTokens?: number;
}

/** Enabled servers are those in the settings that are neither disabled nor masked. */
export function healthOf(config: EffectiveConfig, statuses: readonly ConnectionStatus[]): Health {
  if (!config.valid) return { valid: false, enabled: 0, connected: 0, busy: 0, auth: 0, failed: 0, idle: 0 };
  const states = new Map(statuses.map((status) => [status.name, status.state]));
  let enabled = 0;
  let connected = 0;
  let busy = 0;
  let auth = 0;
  let failed = 0;
  let idle = 0;
  for (const entry of config.servers) {
    if (!entry.enabled || entry.masked) continue;
    enabled++;
    const state: ConnectionState = states.get(entry.name) ?? "connecting";
    if (state === "connected") connected++;
    else if (state === "connecting" || state === "retrying") busy++;
    else if (state === "needs_auth" || state === "needs_client_registration") auth++;
    else if (state === "failed") failed++;
    else if (state === "idle") idle++;
  }
  const placed = statuses.filter((status) => status.context !== undefined);
  const declaredTokens = placed.reduce((sum, status) => sum + status.context!.declared, 0);
  return { valid: true, enabled, connected, busy, auth, failed, idle, ...(placed.length > 0 && { declaredTokens }) };
}

/** `MCP 2/4 · 1 busy · 1 auth · 1 lazy · ≈3.1k tok` — always the ratio, then the groups that are not empty, then the tokens of the declared tool definitions. */
export function footerText(health: Health): string {
  const parts = [`MCP ${health.connected}/${health.enabled}`];
  if (!health.valid) parts.push("invalid settings");
  if (health.busy > 0) parts.push(`${health.busy} busy`);
  if (health.auth > 0) parts.push(`${health.auth} auth`);
  if (health.failed > 0) parts.push(`${health.failed} failed`);
  if (health.idle > 0) parts.push(`${health.idle} lazy`);
  if (health.declaredTokens !== undefined) parts.push(`≈${compactTokens(health.declaredTokens)} tok`);
  return parts.join(" · ");
}

/** `950`, `3.1k`, `12k`. */
function compactTokens(tokens: number): string {
  if (tokens < 1000) return String(tokens);
  return tokens < 10_000 ? `${(tokens / 1000).toFixed(1)}k` : `${Math.round(tokens / 1000)}k`;
}

export type AttentionKind = "auth" | "registration" | "failed";

/** One server's need for a command, or "clear" once it connected (or is off), or undefined while it is still trying. */
export function attentionKindOf(state: ConnectionState): AttentionKind | "clear" | undefined {
  switch (state) {
    case "needs_auth":
      return "auth";
    case "needs_client_registration":
      return "registration";
    case "failed":
      return "failed";
    case "connected":
    case "disabled":
      return "clear";
    default:
      return undefined;
  }
}

export interface AttentionNotice {
  readonly text: string;
  readonly level: "warning" | "error";
}

/** Conditions already announced, for one project: they are announced again only after they cleared. */
export interface AttentionMemory {
  /** The invalid settings last announced (their issues, joined). */
  invalid?: string | undefined;
  /** Server name → the condition last announced for it. */
  readonly servers: Map<string, AttentionKind>;
}

/**
 * The notices a new health snapshot calls for. One per condition: a server
 * that keeps failing across retries, reconnects or reloads is announced once,
 * and again only after it connected (or was turned off) in between.
 */
export function attentionNotices(
  memory: AttentionMemory,
  config: EffectiveConfig,
  statuses: readonly ConnectionStatus[],
  redact: Redactor,
): AttentionNotice[] {
  const notices: AttentionNotice[] = [];
  if (!config.valid) {
    const key = config.issues.map((issue) => `${issue.path}: ${issue.message}`).join("\n");
    if (memory.invalid !== key) {
      memory.invalid = key;
      const count = config.issues.length;
      notices.push({
        level: "error",
        text: safeText(
          `MCP is disabled: the settings have ${count} problem${count === 1 ? "" : "s"}, in ${filesOf(config)}. Run /mcp status (or pi-mcp list) to see ${count === 1 ? "it" : "them"}, then fix ${count === 1 ? "it" : "them"} there.`,
          redact,
        ),
      });
    }
    return notices;
  }
  memory.invalid = undefined;
  const byName = new Map(statuses.map((status) => [status.name, status]));
  const configured = new Set<string>();
  for (const entry of config.servers) {
    if (!entry.enabled || entry.masked) continue;
    configured.add(entry.name);
    const status = byName.get(entry.name);
    if (!status) continue;
    const kind = attentionKindOf(status.state);
    if (kind === undefined) continue;
    if (kind === "clear") {
      memory.servers.delete(entry.name);
      continue;
    }
    if (memory.servers.get(entry.name) === kind) continue;
    memory.servers.set(entry.name, kind);
    notices.push(noticeFor(entry.name, kind, status.cause, redact));
  }
  for (const name of [...memory.servers.keys()]) if (!configured.has(name)) memory.servers.delete(name);
  return notices;
}

/** A failed server's cause in its notice: long enough for the evidence (an exit code and the last stderr lines). */
const MAX_NOTICE_CAUSE = 600;

/** The settings files that hold the problems (every issue names its file; one that does not counts as the global file). */
function filesOf(config: EffectiveConfig): string {
  return [...new Set(config.issues.map((issue) => issue.file ?? config.sources.globalPath))].join(" and ");
}

function noticeFor(server: string, kind: AttentionKind, cause: string | undefined, redact: Redactor): AttentionNotice {
  const name = JSON.stringify(server);
  switch (kind) {
    case "auth":
      return { level: "warning", text: safeText(`MCP server ${name} needs authentication: run /mcp auth ${server}.`, redact) };
    case "registration":
      return {
        level: "warning",
        text: safeText(
          `MCP server ${name} needs a registered OAuth client: set auth.clientId for it (/mcp add, see /mcp status), then run /mcp auth ${server}.`,
          redact,
        ),
      };
    case "failed":
      return {
        level: "error",
        // The cause is made safe whole before it is cut: a secret near the cut never shows in part.
        text: safeText(
          `MCP server ${name} failed${cause ? `: ${safeHead(cause, redact, MAX_NOTICE_CAUSE)}` : ""}. Run /mcp status for details, /mcp reconnect ${server} to try again.`,
          redact,
        ),
      };
  }
}
