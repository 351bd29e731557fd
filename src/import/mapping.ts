import { checkRules } from "../config/resolve.ts";
import { SERVER_NAME, describeJsonType, formatPath } from "../config/field-text.ts";
import { checkShape, type RawServer } from "../config/schema.ts";
import type { Mapped } from "./types.ts";
import { convertTemplate, references, type Converted, type VariableDialect } from "./values.ts";
import { keyedRecord, isRecord, ownValue } from "../safety/keys.ts";

export type Convert = (text: string) => Converted;

/**
 * Collects one pi-mcp definition field by field. Every problem is kept (a
 * server is skipped with all of its reasons at once); reasons and notes carry
 * field paths of the source, never values.
 */
export class DefinitionBuilder {
  readonly reasons: string[] = [];
  readonly notes: string[] = [];
  readonly definition: Record<string, unknown> = {};

  fail(path: string, reason: string): void {
    this.reasons.push(`${path}: ${reason}`);
  }

  note(path: string, note: string): void {
    this.notes.push(`${path}: ${note}`);
  }

  /** Copies one of the fields every host writes alike (converted); an empty list or map is left out. */
  copyStandard(key: StandardField, path: string, value: unknown, convert: Convert): void {
    const { kind, to } = STANDARD_FIELDS[key];
    const copied =
      kind === "string"
        ? this.string(path, value, convert)
        : kind === "strings"
          ? this.strings(path, value, convert)
          : this.stringMap(path, value, convert);
    if (copied === undefined || (typeof copied === "object" && Object.keys(copied).length === 0)) return;
    this.definition[to] = copied;
  }

  string(path: string, value: unknown, convert: Convert): string | undefined {
    if (typeof value !== "string") {
      this.fail(path, `must be a string (is ${describeJsonType(value)})`);
      return undefined;
    }
    const converted = convert(value);
    if (!converted.ok) {
      this.fail(path, converted.reason);
      return undefined;
    }
    return converted.value;
  }

  strings(path: string, value: unknown, convert: Convert): string[] | undefined {
    if (!Array.isArray(value)) {
      this.fail(path, `must be an array of strings (is ${describeJsonType(value)})`);
      return undefined;
    }
    const out: string[] = [];
    value.forEach((item, index) => {
      const converted = this.string(`${path}[${index}]`, item, convert);
      if (converted !== undefined) out.push(converted);
    });
    return out.length === value.length ? out : undefined;
  }

  stringMap(path: string, value: unknown, convert: Convert): Record<string, string> | undefined {
    if (!isRecord(value)) {
      this.fail(path, `must be an object of strings (is ${describeJsonType(value)})`);
      return undefined;
    }
    const out = keyedRecord<string>();
    let complete = true;
    for (const [key, item] of Object.entries(value)) {
      const converted = this.string(fieldPath(path, key), item, convert);
      if (converted === undefined) complete = false;
      else out[key] = converted;
    }
    return complete ? out : undefined;
  }

  boolean(path: string, value: unknown): boolean | undefined {
    if (typeof value === "boolean") return value;
    this.fail(path, `must be true or false (is ${describeJsonType(value)})`);
    return undefined;
  }

  /** The definition, checked exactly as `add` checks what it writes; or every reason it cannot be. */
  result(name: string): Mapped {
    if (!SERVER_NAME.test(name)) {
      this.reasons.unshift("name: pi-mcp server names are 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit");
    }
    if (this.reasons.length > 0) return { ok: false, reasons: this.reasons };
    const problems = validate(name, this.definition);
    if (problems.length > 0) return { ok: false, reasons: problems.map((problem) => `pi-mcp would reject the result: ${problem}`) };
    return { ok: true, definition: this.definition, notes: this.notes };
  }
}

/** The problems `add` would report for this definition (unexpanded, as written). */
function validate(name: string, definition: Record<string, unknown>): string[] {
  const prefix = formatPath(["mcp", "servers", name]);
  const strip = (path: string) => (path.startsWith(prefix) ? path.slice(prefix.length).replace(/^\./, "") || "definition" : path);
  const shape = checkShape({ servers: { [name]: definition } }, "import").filter(
    (issue) => !issue.message.startsWith("server name must be"),
  );
  const problems = shape.length > 0 ? shape : checkRules(definition as RawServer, prefix, false);
  return problems.map((problem) => `${strip(problem.path)}: ${problem.message}`);
}

/** `env` + `A B` → `env["A B"]`, terminal-safe. */
export function fieldPath(base: string, key: string): string {
  const tail = formatPath([key]);
  return tail.startsWith("[") ? `${base}${tail}` : `${base}.${tail}`;
}

/** The `${NAME}` references in every string of a definition. */
export function referencedNames(value: unknown, into: Set<string> = new Set()): Set<string> {
  if (typeof value === "string") for (const name of references(value)) into.add(name);
  else if (Array.isArray(value)) for (const item of value) referencedNames(item, into);
  else if (isRecord(value)) for (const item of Object.values(value)) referencedNames(item, into);
  return into;
}

/** Key order does not matter when comparing definitions. */
export function sameDefinition(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (isRecord(value)) {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value) ?? "undefined";
}

/**
 * The `mcpServers` (and VS Code `servers`) shape most hosts share. A host
 * profile names its transports, its variable dialect, and what its own fields
 * mean; a field the profile does not know skips the server, since pi-mcp
 * cannot tell whether it changes how the server runs.
 */
export interface HostProfile {
  readonly host: string;
  readonly variables: VariableDialect;
  /** `type` values and the transport each one means. */
  readonly types: Readonly<Record<string, "stdio" | "http" | "sse">>;
  /** Fields left out with a note (they change nothing pi-mcp runs). */
  readonly noted?: Readonly<Record<string, string>>;
  /** Fields that skip the server, each with the reason. */
  readonly refused?: Readonly<Record<string, string>>;
  /** Fields meaningful only on a remote server (they skip a stdio one), each with how it is imported. */
  readonly remote?: Readonly<Record<string, (value: unknown, builder: DefinitionBuilder) => void>>;
  /** Other host-specific fields: returns false for a field it does not know. */
  field?(
    key: string,
    value: unknown,
    builder: DefinitionBuilder,
    context: { readonly kind: "stdio" | "http" | "sse"; readonly raw: Record<string, unknown> },
  ): boolean;
}

export function mapCommon(name: string, raw: unknown, profile: HostProfile): Mapped {
  const builder = new DefinitionBuilder();
  if (!isRecord(raw)) {
    builder.fail("definition", `must be an object (is ${describeJsonType(raw)})`);
    return builder.result(name);
  }
  const convert: Convert = (text) => convertTemplate(text, profile.variables);
  const kind = transportOf(raw, profile, builder);
  if (kind === undefined) return builder.result(name);
  const out = builder.definition;
  for (const [key, value] of Object.entries(raw)) {
    const path = fieldPath("", key).replace(/^\./, "");
    if (key === "type") continue;
    if (isStandardField(key)) builder.copyStandard(key, path, value, convert);
    else if (!profileField(profile, key, path, value, builder, { kind, raw })) {
      builder.fail(path, `a field pi-mcp does not know from ${profile.host}; it cannot tell what it changes`);
    }
  }
  if (kind === "sse") out.transport = "sse";
  return builder.result(name);
}

/** A host-specific field through the profile's tables, then its own handler; false when nothing knows it. */
function profileField(
  profile: HostProfile,
  key: string,
  path: string,
  value: unknown,
  builder: DefinitionBuilder,
  context: { readonly kind: "stdio" | "http" | "sse"; readonly raw: Record<string, unknown> },
): boolean {
  const note = profile.noted && ownValue(profile.noted, key);
  const refusal = profile.refused && ownValue(profile.refused, key);
  const remote = profile.remote && ownValue(profile.remote, key);
  if (note !== undefined) builder.note(path, note);
  else if (refusal !== undefined) builder.fail(path, refusal);
  else if (remote !== undefined && context.kind === "stdio") builder.fail(path, "not meaningful on a stdio server");
  else if (remote !== undefined) remote(value, builder);
  else return profile.field?.(key, value, builder, context) ?? false;
  return true;
}

/** The fields every host writes alike: their kind and where each goes in a pi-mcp definition. */
const STANDARD_FIELDS = {
  command: { kind: "string", to: "command" },
  args: { kind: "strings", to: "args" },
  env: { kind: "stringMap", to: "environment" },
  cwd: { kind: "string", to: "cwd" },
  url: { kind: "string", to: "url" },
  headers: { kind: "stringMap", to: "headers" },
} as const;

export type StandardField = keyof typeof STANDARD_FIELDS;

export function isStandardField(key: string): key is StandardField {
  return Object.hasOwn(STANDARD_FIELDS, key);
}

function transportOf(raw: Record<string, unknown>, profile: HostProfile, builder: DefinitionBuilder): "stdio" | "http" | "sse" | undefined {
  const hasCommand = raw.command !== undefined;
  const hasUrl = raw.url !== undefined;
  if (raw.type !== undefined) {
    const kind = typeof raw.type === "string" && Object.hasOwn(profile.types, raw.type) ? profile.types[raw.type] : undefined;
    if (kind === undefined) {
      const known = Object.keys(profile.types)
        .map((type) => `"${type}"`)
        .join(", ");
      builder.fail("type", `not a transport pi-mcp has (${profile.host}'s transports pi-mcp can run: ${known})`);
      return undefined;
    }
    if (kind === "stdio" && !hasCommand) builder.fail("command", "a stdio server needs a command");
    if (kind !== "stdio" && !hasUrl) builder.fail("url", "a remote server needs a url");
    if (kind === "stdio" && hasUrl) builder.fail("url", "not meaningful on a stdio server");
    if (kind !== "stdio" && hasCommand) builder.fail("command", "not meaningful on a remote server");
    return builder.reasons.length > 0 ? undefined : kind;
  }
  if (hasCommand && hasUrl) {
    builder.fail("definition", "has both command and url");
    return undefined;
  }
  if (!hasCommand && !hasUrl) {
    builder.fail("definition", "has neither command (local) nor url (remote)");
    return undefined;
  }
  return hasCommand ? "stdio" : "http";
}

/** Space-separated (OAuth's own form) or an array of scopes. */
function scopesOf(path: string, value: unknown, builder: DefinitionBuilder, convert: Convert): string[] | undefined {
  if (typeof value === "string") {
    const text = builder.string(path, value, convert);
    return text === undefined ? undefined : text.split(/\s+/).filter(Boolean);
  }
  return builder.strings(path, value, convert);
}

/** Why a server whose variables come from an env file is skipped (Cursor and VS Code both have `envFile`). */
export const ENV_FILE_REFUSAL = "loads variables from a file; pi-mcp cannot read env files (list them under env)";

/** pi-mcp's default loopback redirect, named in notes about pre-registered clients. */
export const REDIRECT_NOTE = "pi-mcp's redirect URI (http://127.0.0.1:19876/mcp/oauth/callback unless auth.redirectUri says otherwise)";

/** How one field of a host's OAuth object maps: it sets `auth` fields, or fails or notes through the builder. */
export type OAuthField = (path: string, value: unknown, auth: Record<string, unknown>, builder: DefinitionBuilder) => void;

/** Fields whose value is a string: `auth[target]` gets the converted text. */
export function oauthString(target: "clientId" | "clientSecret", convert: Convert): OAuthField {
  return (path, value, auth, builder) => {
    const text = builder.string(path, value, convert);
    if (text !== undefined) auth[target] = text;
  };
}

/** A scope list (space-separated or an array); an empty one sets nothing. */
export function oauthScopes(convert: Convert): OAuthField {
  return (path, value, auth, builder) => {
    const scopes = scopesOf(path, value, builder, convert);
    if (scopes !== undefined && scopes.length > 0) auth.scopes = scopes;
  };
}

/** A field pi-mcp has no setting for: the server is skipped with this reason. */
export function oauthUnsupported(reason: string): OAuthField {
  return (path, _value, _auth, builder) => builder.fail(path, reason);
}

/**
 * A host's OAuth object (at `base`), field by field, as pi-mcp's `auth:
 * {type: "oauth", ...}`. A field the table does not name goes to `unknown`
 * (default: the server is skipped, since pi-mcp cannot tell what it changes).
 * Returns the mapped `auth`, or undefined when the value is not an object;
 * the definition gets it only when some field was mapped.
 */
export function mapOAuthObject(
  base: string,
  value: unknown,
  builder: DefinitionBuilder,
  fields: Readonly<Record<string, OAuthField>>,
  unknown: OAuthField,
  notObject = "must be an object",
): Record<string, unknown> | undefined {
  if (!isRecord(value)) {
    builder.fail(base, notObject);
    return undefined;
  }
  const auth: Record<string, unknown> = { type: "oauth" };
  for (const [key, item] of Object.entries(value))
    (Object.hasOwn(fields, key) ? fields[key]! : unknown)(fieldPath(base, key), item, auth, builder);
  return auth;
}

/** Sets the mapped `auth` on the definition when it holds more than its type. */
export function keepOAuth(auth: Record<string, unknown>, builder: DefinitionBuilder): void {
  if (Object.keys(auth).length > 1) builder.definition.auth = auth;
}
