import { terminalSafeJson } from "../safety/text.ts";

/*
 * How settings problems name a field and a value, and the rule for server
 * names: shared by the shape check (schema.ts, which loads arktype) and every
 * reader and writer of settings that must not load it.
 */

/** Server names become part of Pi tool names and command arguments: keep them plain. */
export const SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** What kind of JSON value something is, for messages: "an array", "a string", "null"... (never the value). */
export function describeJsonType(value: unknown): string {
  return value === null ? "null" : Array.isArray(value) ? "an array" : typeof value === "object" ? "an object" : `a ${typeof value}`;
}

const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** `["mcp","servers","a.b","args",1]` → `mcp.servers["a.b"].args[1]` */
export function formatPath(path: readonly (string | number | symbol)[]): string {
  let text = "";
  for (const key of path) {
    if (typeof key === "number") text += `[${key}]`;
    else if (typeof key === "string" && PLAIN_KEY.test(key)) text += text ? `.${key}` : key;
    else text += `[${terminalSafeJson(String(key))}]`;
  }
  return text;
}
