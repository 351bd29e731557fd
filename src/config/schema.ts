import { type } from "arktype";
import type { ConfigIssue } from "./types.ts";

/*
 * The shape of the `mcp` object as written in settings.json, before `${NAME}`
 * expansion. arktype checks types and unknown keys at every level; the rules
 * that relate fields to each other live in `rules.ts`.
 */

const positiveMs = "number.integer > 0";
const stringMap = "Record<string, string>";

const NoAuth = type({ type: "'none'", "+": "reject" });
const BearerAuth = type({ type: "'bearer'", token: "string > 0", "+": "reject" });
const OAuthAuth = type({
  type: "'oauth'",
  "clientId?": "string > 0",
  "clientSecret?": "string > 0",
  "redirectUri?": "string > 0",
  "scopes?": "string[]",
  "+": "reject",
});
const Auth = NoAuth.or(BearerAuth).or(OAuthAuth);

const ToolFilter = type({ "include?": "string[]", "exclude?": "string[]", "+": "reject" });

export const RawServer = type({
  "command?": "string > 0",
  "args?": "string[]",
  "cwd?": "string > 0",
  "environment?": stringMap,
  "url?": "string > 0",
  "transport?": "'stdio' | 'http' | 'sse'",
  "headers?": stringMap,
  "auth?": Auth,
  "enabled?": "boolean",
  "connectTimeoutMs?": positiveMs,
  "requestTimeoutMs?": positiveMs,
  "tools?": ToolFilter,
  "+": "reject",
});
export type RawServer = typeof RawServer.infer;

const Retry = type({
  "maxRetries?": "number.integer >= 0",
  "initialDelayMs?": positiveMs,
  "maxDelayMs?": positiveMs,
  "backoffFactor?": "number >= 1",
  "+": "reject",
});

export const RawMcp = type({
  "connectTimeoutMs?": positiveMs,
  "requestTimeoutMs?": positiveMs,
  "retry?": Retry,
  "servers?": type({ "[string]": RawServer.or("null") }),
  "+": "reject",
});
export type RawMcp = typeof RawMcp.infer;

/** Server names become part of Pi tool names and command arguments: keep them plain. */
export const SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** Checks the written shape of one scope's `mcp` object; reports every problem. */
export function checkShape(raw: unknown, file: string): ConfigIssue[] {
  const result = RawMcp(raw);
  const issues: ConfigIssue[] = [];
  if (result instanceof type.errors) {
    for (const error of result) {
      const message = error.code === "predicate" && error.expected === "removed" ? "unknown field" : error.problem;
      issues.push({ path: formatPath(["mcp", ...error.path]), message, file });
    }
  }
  const servers = isRecord(raw) && isRecord(raw.servers) ? Object.keys(raw.servers) : [];
  for (const name of servers) {
    if (!SERVER_NAME.test(name)) {
      issues.push({
        path: formatPath(["mcp", "servers", name]),
        message: "server name must be 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit",
        file,
      });
    }
  }
  return issues;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** `["mcp","servers","a.b","args",1]` → `mcp.servers["a.b"].args[1]` */
export function formatPath(path: readonly (string | number | symbol)[]): string {
  let text = "";
  for (const key of path) {
    if (typeof key === "number") text += `[${key}]`;
    else if (typeof key === "string" && PLAIN_KEY.test(key)) text += text ? `.${key}` : key;
    else text += `[${JSON.stringify(String(key))}]`;
  }
  return text;
}
