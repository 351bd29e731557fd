import { isLoopbackHttpUrl } from "../config/resolve.ts";
import {
  DefinitionBuilder,
  fieldPath,
  keepOAuth,
  mapOAuthObject,
  oauthScopes,
  oauthString,
  oauthUnsupported,
  type OAuthField,
  isStandardField,
  type Convert,
  type StandardField,
} from "./mapping.ts";
import type { Mapped } from "./types.ts";
import { convertPiLiteral, convertPiPath, convertPiValue } from "./values.ts";
import { ownValue, isRecord } from "../safety/keys.ts";

/*
 * Pi's built-in MCP configuration: `mcpServers` in `<agentDir>/mcp.json` and
 * a trusted project's `.pi/mcp.json` (node_modules/@earendil-works/
 * pi-coding-agent/docs/mcp.md). Entries are read the way Pi reads them: an
 * entry Pi rejects is not imported (Pi never ran it), and fields Pi ignores
 * are ignored here too, with a note.
 */

const EXPOSURES = ["codemode", "deferred", "direct", "hidden"];
const ALIASES: Readonly<Record<string, string>> = { "codemode-deferred": "codemode" };
const STDIO_FIELDS = new Set(["command", "args", "env", "cwd"]);
const HTTP_FIELDS = new Set(["url", "headers", "oauth", "auth"]);
const COMMON_FIELDS = new Set(["type", "enabled", "timeout", "exposure", "toolExposure", "description"]);
/** A project entry without these overrides a global server's `enabled`/`exposure`/`toolExposure`. */
export const PI_OVERRIDE_KEYS = ["enabled", "exposure", "toolExposure"];

export function isPiOverride(raw: Record<string, unknown>): boolean {
  return raw.command === undefined && raw.url === undefined && raw.type === undefined;
}

/** How Pi reads each standard field: paths (a leading `~`), values with `${NAME}`, a literal URL. */
const PI_CONVERT: Readonly<Record<StandardField, Convert>> = {
  command: convertPiPath,
  args: convertPiPath,
  cwd: convertPiPath,
  env: convertPiValue,
  url: convertPiLiteral,
  headers: convertPiValue,
};

/** Maps one full Pi entry (a project override already merged over its global entry). */
export function mapPi(name: string, raw: unknown): Mapped {
  const builder = new DefinitionBuilder();
  if (!isRecord(raw)) {
    builder.fail("definition", "Pi rejects an entry that is not an object");
    return builder.result(name);
  }
  const kind = piKind(raw, builder);
  if (kind === undefined) return builder.result(name);
  const out = builder.definition;
  for (const [key, value] of Object.entries(raw)) {
    const path = fieldPath("", key).replace(/^\./, "");
    if (!COMMON_FIELDS.has(key) && !STDIO_FIELDS.has(key) && !HTTP_FIELDS.has(key)) {
      builder.note(path, "not imported: Pi ignores fields it does not know");
      continue;
    }
    if ((kind === "stdio" && HTTP_FIELDS.has(key)) || (kind !== "stdio" && STDIO_FIELDS.has(key))) {
      builder.note(path, `not imported: Pi ignores it on a ${kind === "stdio" ? "stdio" : "remote"} server`);
      continue;
    }
    if (isStandardField(key)) {
      builder.copyStandard(key, path, value, PI_CONVERT[key]);
      continue;
    }
    switch (key) {
      case "oauth":
        mapOAuth(value, raw, builder);
        break;
      case "auth":
        builder.fail("auth", "sends the token of one of Pi's /login providers; pi-mcp has no equivalent");
        break;
      case "enabled":
        if (builder.boolean(path, value) === false) out.enabled = false;
        break;
      case "timeout":
        mapTimeout(value, builder);
        break;
      case "description":
        builder.note("description", "not imported: pi-mcp has no description setting");
        break;
      case "type":
      case "exposure":
      case "toolExposure":
        break;
    }
  }
  mapExposure(raw, builder);
  if (kind === "sse") {
    out.transport = "sse";
    builder.note("type", 'Pi rejects legacy SSE and never connected this server; pi-mcp connects it with transport "sse"');
  }
  return builder.result(name);
}

function piKind(raw: Record<string, unknown>, builder: DefinitionBuilder): "stdio" | "http" | "sse" | undefined {
  const { type, url, command } = raw;
  if (type === "sse" && typeof url === "string") return "sse";
  if (typeof url === "string" && (type === undefined || type === "http" || type === "streamable-http")) return "http";
  if (typeof command === "string" && (type === undefined || type === "stdio")) return "stdio";
  builder.fail(
    "definition",
    'Pi rejects this entry: it needs "command" (stdio) or "url" (streamable HTTP), and type "stdio", "http" or "streamable-http" to match',
  );
  return undefined;
}

/** Pi's `timeout` is the per-request timeout in seconds (progress resets it), like pi-mcp's `requestTimeoutMs`. */
function mapTimeout(value: unknown, builder: DefinitionBuilder): void {
  if (typeof value !== "number" || !(value > 0) || !Number.isFinite(value)) {
    builder.fail("timeout", "Pi rejects this entry: timeout must be a positive number of seconds");
    return;
  }
  const exact = value * 1000;
  const ms = Math.max(1, Math.round(exact));
  builder.definition.requestTimeoutMs = ms;
  if (Math.abs(ms - exact) > 1e-6) builder.note("timeout", `${value} s rounded to ${ms} ms (requestTimeoutMs)`);
}

/**
 * Pi's OAuth client settings, where pi-mcp has them: clientId, clientSecret,
 * the loopback redirect (callbackUrl / callbackPort) and the scopes.
 */
function mapOAuth(value: unknown, raw: Record<string, unknown>, builder: DefinitionBuilder): void {
  if (!isRecord(value)) {
    builder.fail("oauth", "Pi rejects this entry: oauth must be an object");
    return;
  }
  const headers = isRecord(raw.headers) ? Object.keys(raw.headers) : [];
  if (headers.some((header) => header.toLowerCase() === "authorization")) {
    builder.note("oauth", "not imported: Pi does not use OAuth for a server with an Authorization header");
    return;
  }
  let port: number | undefined;
  if (value.callbackPort !== undefined) {
    const candidate = value.callbackPort;
    if (typeof candidate !== "number" || !Number.isInteger(candidate) || candidate < 1 || candidate > 65535) {
      builder.fail("oauth.callbackPort", "Pi rejects this entry: it must be a port number");
    } else {
      port = candidate;
    }
  }
  const callbackUrl: OAuthField = (path, item, auth, fieldBuilder) => {
    const url = fieldBuilder.string(path, item, convertPiLiteral);
    if (url === undefined) return;
    const redirect = redirectOf(url, port);
    if (typeof redirect === "string") auth.redirectUri = redirect;
    else fieldBuilder.fail(path, redirect.reason);
  };
  const fields: Record<string, OAuthField> = { ...PI_OAUTH, callbackUrl };
  const ignored: OAuthField = (path, _item, _auth, fieldBuilder) =>
    fieldBuilder.note(path, "not imported: Pi ignores fields it does not know");
  const auth = mapOAuthObject("oauth", value, builder, fields, ignored)!;
  if (port !== undefined && value.callbackUrl === undefined) auth.redirectUri = `http://127.0.0.1:${port}/callback`;
  keepOAuth(auth, builder);
}

/** Pi's `clientRegistration`: "auto" and "dcr" register dynamically without a client ID, as pi-mcp does; "cimd" needs Pi's own document. */
const piClientRegistration: OAuthField = (path, item, _auth, builder) => {
  if (item === "cimd") builder.fail(path, '"cimd" signs in with Pi\'s Client ID Metadata Document on pi.dev; pi-mcp cannot use it');
  else if (item !== "auto" && item !== "dcr") builder.fail(path, 'Pi rejects this entry: it must be "auto", "dcr" or "cimd"');
};

/** Pi's OAuth fields with a fixed meaning (`callbackUrl` depends on `callbackPort`: see mapOAuth). */
const PI_OAUTH: Readonly<Record<string, OAuthField>> = {
  clientId: oauthString("clientId", convertPiLiteral),
  clientSecret: oauthString("clientSecret", convertPiValue),
  callbackPort: () => undefined, // read first: callbackUrl may need it
  scope: oauthScopes(convertPiLiteral),
  clientName: oauthUnsupported("sets the client name sent at client registration; pi-mcp cannot set it"),
  clientRegistration: piClientRegistration,
  authServerMetadataUrl: oauthUnsupported("replaces authorization-server discovery; pi-mcp has no such setting"),
};

function redirectOf(callbackUrl: string, port: number | undefined): string | { reason: string } {
  const url = URL.parse(callbackUrl);
  if (url === null || !isLoopbackHttpUrl(callbackUrl) || url.search !== "" || url.hash !== "") {
    return { reason: "Pi rejects this entry: it must be an http URL on localhost, 127.0.0.1 or [::1]" };
  }
  if (url.port !== "") {
    if (port !== undefined && Number(url.port) !== port)
      return { reason: "Pi rejects this entry: callbackUrl and callbackPort name different ports" };
    return callbackUrl;
  }
  if (port === undefined)
    return { reason: "has no port, so Pi picks a free one at each sign-in; pi-mcp needs a fixed redirect (add callbackPort)" };
  url.port = String(port);
  return url.href;
}

/**
 * pi-mcp has no exposure setting: every tool goes to the model directly. Only
 * `hidden` has an equivalent, and only for single tools, as `tools.exclude`
 * (when Pi's first-match order does not matter). A server hidden as a whole
 * stays connected in Pi with nothing reachable, which pi-mcp cannot express.
 */
function mapExposure(raw: Record<string, unknown>, builder: DefinitionBuilder): void {
  const exposure = typeof raw.exposure === "string" ? (ownValue(ALIASES, raw.exposure) ?? raw.exposure) : raw.exposure;
  if (exposure !== undefined && (typeof exposure !== "string" || !EXPOSURES.includes(exposure))) {
    builder.fail("exposure", `Pi rejects this entry: exposure must be one of ${EXPOSURES.map((value) => `"${value}"`).join(", ")}`);
    return;
  }
  if (exposure === "hidden") {
    builder.fail(
      "exposure",
      'is "hidden": Pi keeps the server but makes its tools and resources unreachable; pi-mcp cannot hide a connected server (disable it instead)',
    );
    return;
  }
  if (exposure !== undefined) {
    builder.note("exposure", `"${exposure}" not imported: pi-mcp has no exposure setting and offers every tool to the model directly`);
  }
  if (raw.toolExposure === undefined) return;
  if (!isRecord(raw.toolExposure)) {
    builder.fail("toolExposure", "Pi rejects this entry: toolExposure must map tool names to exposures");
    return;
  }
  const hiddenExact: string[] = [];
  const hiddenPatterns: string[] = [];
  const visibleExact: string[] = [];
  let visiblePatternSeen = false;
  let exposedOthers = false;
  for (const [tool, value] of Object.entries(raw.toolExposure)) {
    const resolved = typeof value === "string" ? (ownValue(ALIASES, value) ?? value) : value;
    if (typeof resolved !== "string" || !EXPOSURES.includes(resolved)) {
      builder.fail(fieldPath("toolExposure", tool), "Pi rejects this entry: not an exposure");
      return;
    }
    const pattern = tool.includes("*");
    if (resolved === "hidden") {
      if (!pattern) hiddenExact.push(tool);
      else if (visiblePatternSeen) {
        builder.fail(
          "toolExposure",
          "a non-hidden pattern comes before a hidden one, so Pi's first-match order decides which tools are hidden; pi-mcp's tools filter has no order",
        );
        return;
      } else hiddenPatterns.push(tool);
    } else {
      exposedOthers = true;
      if (pattern) visiblePatternSeen = true;
      else visibleExact.push(tool);
    }
  }
  const matchers = hiddenPatterns.map(patternRegExp);
  const exception = visibleExact.find((tool) => matchers.some((matcher) => matcher.test(tool)));
  if (exception !== undefined) {
    builder.fail(
      fieldPath("toolExposure", exception),
      "exposes one tool inside a hidden pattern; pi-mcp's tools.exclude has no exceptions",
    );
    return;
  }
  const exclude = [...hiddenExact.map(escapeGlob), ...hiddenPatterns.map(patternToGlob)];
  if (exclude.length > 0) {
    builder.definition.tools = { exclude };
    builder.note("toolExposure", "hidden tools imported as tools.exclude");
  }
  if (exposedOthers)
    builder.note("toolExposure", 'exposures other than "hidden" not imported: pi-mcp offers every tool to the model directly');
}

/** Pi's tool patterns: `*` matches any characters (also `/`), nothing else is special. */
function patternRegExp(pattern: string): RegExp {
  return new RegExp(
    `^${pattern
      .split("*")
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*")}$`,
  );
}

/** A literal tool name as a picomatch glob: every character but letters, digits, `_` and `-` escaped. */
export function escapeGlob(text: string): string {
  return text.replace(/[^A-Za-z0-9_-]/g, (char) => `\\${char}`);
}

/**
 * A Pi pattern as a picomatch glob matching the same tool names. picomatch's
 * `*` stops at `/` (tool names may hold `/`), so each `*` also admits any
 * further `/`-separated segments.
 */
export function patternToGlob(pattern: string): string {
  return pattern.split("*").map(escapeGlob).join("*{,/**/*}");
}
