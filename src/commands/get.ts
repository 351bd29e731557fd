import { isRecord } from "../safety/keys.ts";
import {
  firstRequestWaitOf,
  listedAuth,
  type EffectiveConfig,
  type ExposureSetting,
  type ListedAuth,
  type ServerEntry,
} from "../kernel/settings.ts";
import { PiMcpError } from "../kernel/errors.ts";
import { REDACTED, createRedactor, safeText, terminalSafeJson } from "../safety/text.ts";
import { exposureOf, rootsOf, rootsText, targetOf } from "./describe.ts";
import { shownRootFolder } from "../config/roots.ts";
import { entryTimeouts } from "../config/timeouts.ts";
import { maskLiterals } from "./literals.ts";
import { knownTokens, storedAuth, tokensCell } from "./list.ts";
import { statusSummary } from "./runtime.ts";
import { SURFACE_WIDTH, wrapLine } from "./text.ts";
import type { CommandEnvironment, CommandResult, CommandSpec } from "../kernel/commands.ts";
import { JSON_OPTION } from "./parse.ts";

/** The `get --json` document: one definition as written (literal credentials redacted) and what it comes to. */
export interface ServerDetails {
  readonly name: string;
  readonly scope: "global" | "project";
  /** The settings file that holds the definition. */
  readonly file: string;
  readonly enabled: boolean;
  readonly masked: boolean;
  readonly transport: "stdio" | "http" | "sse";
  readonly url: string | null;
  readonly command: string | null;
  readonly args: readonly string[];
  readonly cwd: string | null;
  /** Values as written: `${NAME}` unexpanded, literal values replaced by `‹redacted›`. */
  readonly headers: Readonly<Record<string, string>>;
  readonly environment: Readonly<Record<string, string>>;
  readonly auth: ListedAuth;
  /** The `auth` setting as written (token and client secret redacted when literal), or null. */
  readonly authSettings: Readonly<Record<string, unknown>> | null;
  readonly storedAuth: boolean;
  readonly exposure: ExposureSetting;
  /** The estimated tokens of its tool definitions, from the catalog a Pi session recorded (null: none known). */
  readonly definitionTokens: number | null;
  readonly toolExposure: Readonly<Record<string, string>>;
  readonly tools: { readonly include?: readonly string[]; readonly exclude?: readonly string[] } | null;
  /** `"cwd"` (Pi's working folder), `false` (no roots capability) or the folders. */
  readonly roots: "cwd" | false | readonly string[];
  readonly connectTimeoutMs: number;
  /** In effect: never above the deadline (a higher setting is cut to it). */
  readonly requestTimeoutMs: number;
  /** The most one request may take in all (progress restarts only its timeout). */
  readonly requestDeadlineMs: number;
  /** The longest the first model request of a run without a terminal UI waits for this server while its catalog is not known (0: never, e.g. lazy). */
  readonly firstRequestWaitMs: number;
  /** The settings problems of this definition (none when it is valid). */
  readonly errors: readonly { readonly path: string; readonly message: string }[];
}

export const getCommand: CommandSpec = {
  name: "get",
  positionals: [{ name: "server", description: "Server name", required: true }],
  surfaces: ["cli", "pi"],
  summary: "Show one server definition: where it is, what it runs or reaches, its auth, exposure, roots and timeouts",
  usage: "get <server> [--json]",
  examples: [
    { line: "get docs", description: "The definition of the server named docs", only: "cli" },
    { line: "get docs --json", description: "The same as one JSON document", only: "cli" },
    { line: "get docs", description: "The definition of the server named docs and its live connection's state", only: "pi" },
  ],
  options: { json: JSON_OPTION },
  async run(input, env): Promise<CommandResult> {
    const name = input.positionals[0]!;
    const config = await env.loadConfig();
    const entry = config.servers.find((server) => server.name === name);
    if (!entry) throw new PiMcpError("not_found", `server "${name}" is not configured (pi-mcp list shows the configured servers)`);
    const details = await serverDetails(config, entry, env);
    const cutFromMs = entryTimeouts(config, entry).cutFromMs;
    const live = (await env.runtime?.status())?.servers.find((server) => server.name === name);
    const status = live ? [statusSummary(live), ...(live.cause && live.state !== "connected" ? [`cause: ${live.cause}`] : [])] : undefined;
    const redact = createRedactor(config.secrets);
    return {
      exitCode: 0,
      output: safeText(formatDetails(details, status, SURFACE_WIDTH[env.surface], cutFromMs), redact),
      ...(input.options.json ? { json: redactedJson(details, redact) } : {}),
    };
  },
};

async function serverDetails(config: EffectiveConfig, entry: ServerEntry, env: CommandEnvironment): Promise<ServerDetails> {
  const { value: written } = maskLiterals(entry.written, REDACTED);
  const strings = (field: unknown): Record<string, string> =>
    isRecord(field)
      ? Object.fromEntries(Object.entries(field).map(([key, value]) => [key, typeof value === "string" ? value : JSON.stringify(value)]))
      : {};
  const text = (field: unknown) => (typeof field === "string" ? field : null);
  const number = (field: unknown, fallback: number) => (typeof field === "number" ? field : fallback);
  const timeouts = entryTimeouts(config, entry);
  const prefix = `mcp.servers.${entry.name}`;
  const tools = isRecord(written.tools) ? written.tools : undefined;
  return {
    name: entry.name,
    scope: entry.scope,
    file: entry.file,
    enabled: entry.enabled,
    masked: entry.masked,
    transport: entry.transport,
    url: text(written.url),
    command: text(written.command),
    args: Array.isArray(written.args) ? written.args.map((arg) => (typeof arg === "string" ? arg : JSON.stringify(arg))) : [],
    cwd: text(written.cwd),
    headers: strings(written.headers),
    environment: strings(written.environment),
    auth: listedAuth(entry),
    authSettings: isRecord(written.auth) ? written.auth : null,
    storedAuth: await storedAuth(entry, env),
    exposure: exposureOf(config, entry),
    definitionTokens: knownTokens(config, env).get(entry.name) ?? null,
    toolExposure: strings(written.toolExposure),
    tools: tools
      ? {
          ...(Array.isArray(tools.include) && { include: tools.include.map(String) }),
          ...(Array.isArray(tools.exclude) && { exclude: tools.exclude.map(String) }),
        }
      : null,
    roots: rootsOf(config, entry, env.cwd),
    connectTimeoutMs: number(written.connectTimeoutMs, config.connectTimeoutMs),
    requestTimeoutMs: timeouts.timeoutMs,
    requestDeadlineMs: timeouts.deadlineMs,
    firstRequestWaitMs: firstRequestWaitOf(config, entry),
    errors: config.issues
      .filter((issue) => issue.path === prefix || issue.path.startsWith(`${prefix}.`) || issue.path.startsWith(`${prefix}[`))
      .map((issue) => ({ path: issue.path, message: issue.message })),
  };
}

const AUTH_TEXT: Readonly<Record<ListedAuth, string>> = {
  "oauth-on-demand": 'oauth on demand (no auth setting: OAuth when the server asks for it; {"type": "none"} turns it off)',
  none: "none",
  bearer: "bearer",
  oauth: "oauth",
};

/** `name: value` lines whose values line up; a value of several lines continues under itself. */
function fields(rows: readonly (readonly [string, readonly string[]])[], lineWidth: number): string[] {
  const width = Math.max(...rows.map(([label]) => label.length)) + 1;
  const hang = " ".repeat(2 + width + 1);
  return rows.flatMap(([label, values]) =>
    values.flatMap((value, index) =>
      wrapLine(`${index === 0 ? `  ${`${label}:`.padEnd(width)} ` : hang}${value}`, lineWidth, hang, "keep"),
    ),
  );
}

/** The text of `get`; `cutFromMs`: the requestTimeoutMs as set, when it was cut to the deadline. */
function formatDetails(details: ServerDetails, status: readonly string[] | undefined, lineWidth: number, cutFromMs?: number): string {
  const pairs = (record: Readonly<Record<string, string>>, separator: string) =>
    Object.entries(record).map(([key, value]) => `${key}${separator}${value}`);
  const state = details.masked
    ? "masked by the project settings (this hidden definition is not used)"
    : details.enabled
      ? "enabled"
      : "disabled";
  const rows: [string, string[]][] = [
    ["scope", [`${details.scope} (${details.file})`]],
    ["state", [state]],
    ["transport", [details.transport]],
  ];
  if (details.url !== null) rows.push(["url", [details.url]]);
  if (details.command !== null) rows.push(["command", [targetOf({ written: { command: details.command, args: details.args } })]]);
  if (details.cwd !== null) rows.push(["cwd", [details.cwd]]);
  if (Object.keys(details.headers).length > 0) rows.push(["headers", pairs(details.headers, ": ")]);
  if (Object.keys(details.environment).length > 0) rows.push(["environment", pairs(details.environment, "=")]);
  if (details.transport !== "stdio") {
    const settings = details.authSettings ? Object.entries(details.authSettings).filter(([key]) => key !== "type") : [];
    rows.push([
      "auth",
      [
        AUTH_TEXT[details.auth],
        ...settings.map(([key, value]) => `${key}: ${typeof value === "string" ? value : terminalSafeJson(value)}`),
      ],
    ]);
    rows.push(["stored auth", [details.storedAuth ? "yes" : "no"]]);
  }
  const perTool = pairs(details.toolExposure, "=");
  rows.push(["exposure", [perTool.length > 0 ? `${details.exposure}; per tool: ${perTool.join(", ")}` : details.exposure]]);
  rows.push([
    "tokens",
    [
      details.definitionTokens === null
        ? "? (no catalog recorded yet: a Pi session records it)"
        : `${tokensCell(details.definitionTokens)} of tool definitions (last recorded catalog)`,
    ],
  ]);
  if (details.tools)
    rows.push([
      "tools",
      [
        ...(details.tools.include ? [`include ${details.tools.include.join(", ")}`] : []),
        ...(details.tools.exclude ? [`exclude ${details.tools.exclude.join(", ")}`] : []),
      ],
    ]);
  rows.push([
    "roots",
    [
      details.roots === "cwd"
        ? "cwd (Pi's working folder)"
        : rootsText(details.roots === false ? false : details.roots.map(shownRootFolder), ", "),
    ],
  ]);
  rows.push([
    "timeouts",
    [
      `connect ${details.connectTimeoutMs} ms, request ${details.requestTimeoutMs} ms${cutFromMs === undefined ? "" : ` (requestTimeoutMs ${cutFromMs} is cut to the deadline)`}, deadline ${details.requestDeadlineMs} ms`,
    ],
  ]);
  if (details.enabled && !details.masked)
    rows.push([
      "first turn",
      [details.firstRequestWaitMs > 0 ? `waits up to ${details.firstRequestWaitMs} ms for its tools (print, JSON, RPC)` : "not waited for"],
    ]);
  if (status) rows.push(["status", [...status]]);
  if (details.errors.length > 0) rows.push(["problems", details.errors.map((error) => `${error.path}: ${error.message}`)]);
  return [details.name, ...fields(rows, lineWidth)].join("\n");
}

/** The document with every string made safe (resolved secrets redacted, terminal controls gone). */
function redactedJson(details: ServerDetails, redact: ReturnType<typeof createRedactor>): unknown {
  return JSON.parse(JSON.stringify(details), (_key, value: unknown) =>
    typeof value === "string" ? safeText(value, redact) : value,
  ) as unknown;
}
