/**
 * The conformance client: what `@modelcontextprotocol/conformance client --command ...` runs.
 *
 * It drives pi-mcp's own host — the kernel with every internal plugin, one
 * McpHost, tools reached through the bridged tools' `execute` exactly as Pi
 * reaches them — against the scenario server whose URL the runner appends as
 * the last argument. The runner names the scenario in MCP_CONFORMANCE_SCENARIO
 * and passes scenario data (tool calls, credentials) in MCP_CONFORMANCE_CONTEXT.
 *
 * Run with Node 22: `node --experimental-transform-types test/conformance/client.ts <url>`
 * (transform, not strip: the host uses constructor parameter properties);
 * scripts/conformance.mjs does, for every run. The transport is Streamable HTTP;
 * MCP_CONFORMANCE_TRANSPORT=sse selects legacy SSE. The host negotiates the
 * protocol era itself (server/discover, falling back to initialize), so the
 * runner's MCP_CONFORMANCE_PROTOCOL_VERSION is only logged.
 *
 * Exit status: 0 when the scenario's flow ran to its end, 1 otherwise. Each step
 * is logged to stderr; the runner keeps stdout and stderr with its results.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createKernel } from "../../src/composition.ts";
import { DEFAULTS, FEATURES, type AuthConfig, type EffectiveConfig, type RemoteDefinition } from "../../src/kernel/settings.ts";
import { authorize } from "../../plugins/auth-oauth/flow.ts";
import { setBrowserOpener } from "../../src/safety/browser.ts";
import { CredentialStore } from "../../plugins/auth-oauth/store.ts";
import { freePort } from "../helpers/servers.ts";
import type { HostContext } from "../../src/kernel/types.ts";
import type { UiService } from "../../src/kernel/services.ts";
import type { ConnectionState } from "../../src/kernel/status.ts";
import { McpHost, type BridgedTool, type ToolSink } from "../../src/runtime/host.ts";
import type { ToolOutcome } from "../../src/runtime/tool-call.ts";
import { createRedactor } from "../../src/safety/text.ts";

const SERVER = "conformance";
/** The host's defaults would do; set here so the numbers the runner's timeouts must cover are in one place. */
const CONNECT_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 15_000;
/**
 * Settings `mcp.retry`: more and quicker retries than the defaults. A requirement run starts
 * some forty scenario servers and clients at once, and on a small CI machine the runner can
 * take longer than the host's fixed 3 s version-negotiation probe timeout to answer; each
 * such attempt fails and is retried (see the report on PROBE_TIMEOUT_MS in connection.ts).
 */
const RETRY = { maxRetries: 8, initialDelayMs: 500, maxDelayMs: 4_000, backoffFactor: 1.5 };
/** How long the connection (with its retries) may take to reach a final state: inside the runner's timeouts. */
const SETTLE_TIMEOUT_MS = 50_000;
/** Connection states that end the wait: connected, or a state the host does not retry out of. */
const SETTLED = new Set<ConnectionState>(["connected", "failed", "needs_auth", "needs_client_registration", "disabled"]);

interface ToolCallSpec {
  readonly name: string;
  readonly arguments?: Record<string, unknown>;
}

/** What MCP_CONFORMANCE_CONTEXT may carry (only the parts this client reads). */
interface ScenarioContext {
  readonly name?: string;
  readonly toolCalls?: readonly ToolCallSpec[];
  readonly [key: string]: unknown;
}

/** A running host and the tools it handed to its sink. */
interface Session {
  readonly host: McpHost;
  /** MCP tool name → the bridged tool, as Pi would have registered it. */
  readonly tools: Map<string, BridgedTool>;
}

type ScenarioRun = (session: Session, context: ScenarioContext) => Promise<void>;

const started = performance.now();

function log(text: string): void {
  process.stderr.write(`[conformance-client +${Math.round(performance.now() - started)}ms] ${text}\n`);
}

/** Calls one tool the way Pi does: through the bridged tool's execute. */
async function call(session: Session, name: string, args: Record<string, unknown> = {}): Promise<ToolOutcome> {
  const tool = session.tools.get(name);
  if (!tool) throw new Error(`the host offers no tool "${name}" (offered: ${[...session.tools.keys()].join(", ") || "none"})`);
  log(`calling ${tool.name} (${name}) with ${JSON.stringify(args)}`);
  // In the foreground, as a model's call in a session with a person: server requests may ask SCRIPTED_USER.
  const outcome = await tool.execute(args, { interactive: true });
  const text = outcome.content.map((item) => (item.type === "text" ? item.text : `[${item.type}]`)).join("\n");
  log(`${name} → ${outcome.isError ? "error result" : "result"}: ${text.slice(0, 500)}`);
  return outcome;
}

/** Calls each tool and reports every failure at the end, so one failure does not hide the others. */
async function callAll(session: Session, calls: readonly ToolCallSpec[]): Promise<void> {
  const failures: string[] = [];
  for (const spec of calls) {
    try {
      const outcome = await call(session, spec.name, spec.arguments ?? {});
      if (outcome.isError) failures.push(`${spec.name}: the tool reported an error`);
    } catch (error) {
      failures.push(`${spec.name}: ${describe(error)}`);
      log(`${spec.name} failed: ${describe(error)}`);
    }
  }
  if (failures.length > 0) throw new Error(failures.join("; "));
}

/** Calls every tool the host offers, with arguments made up from each input schema (as a model would). */
async function callEveryOfferedTool(session: Session): Promise<void> {
  await callAll(
    session,
    [...session.tools.values()].map((tool) => ({ name: tool.tool.name, arguments: sampleArguments(tool.tool.inputSchema) })),
  );
}

/** Plausible values for a tool's required properties. */
function sampleArguments(schema: unknown): Record<string, unknown> {
  const record = isRecord(schema) ? schema : {};
  const properties = isRecord(record.properties) ? record.properties : {};
  const required = Array.isArray(record.required) ? record.required.filter((key): key is string => typeof key === "string") : [];
  const args: Record<string, unknown> = {};
  for (const key of required) {
    const property = isRecord(properties[key]) ? properties[key] : {};
    switch (property.type) {
      case "integer":
      case "number":
        args[key] = 1;
        break;
      case "boolean":
        args[key] = true;
        break;
      case "object":
        args[key] = {};
        break;
      case "array":
        args[key] = [];
        break;
      case "null":
        args[key] = null;
        break;
      default:
        args[key] = "sample";
    }
  }
  return args;
}

/**
 * The scenarios' scripted user, answering the host's elicitation dialogs (the
 * elicitation plugin asks through Pi's dialogs, one per field): yes to every
 * request, and every field left at its default (an empty input keeps it, the
 * default option is listed first, a yes/no question gets yes). This is what the
 * elicitation scenarios expect: sep1034 asks to "accept with defaults", and the
 * SEP-2322 (MRTR) tools ask for a confirmation.
 */
const SCRIPTED_USER: UiService = {
  input: async () => "",
  select: async (_title, options) => options[0],
  confirm: async () => true,
  notify: (text) => log(`notice: ${text}`),
};

/** Only connecting (initialize or discover, then tools/list) is under test. */
const connectOnly: ScenarioRun = async () => {};

const SCENARIOS: Record<string, ScenarioRun> = {
  initialize: connectOnly,
  "request-metadata": connectOnly,

  tools_call: async (session) => {
    await callAll(session, [{ name: "add_numbers", arguments: { a: 5, b: 3 } }]);
  },

  // The call's SSE stream closes after a priming event; the answer arrives on the resumed GET stream.
  "sse-retry": async (session) => {
    await callAll(session, [{ name: "test_reconnection", arguments: {} }]);
  },

  // Form-mode elicitation with every field defaulted: SCRIPTED_USER accepts and keeps each default.
  "elicitation-sep1034-client-defaults": async (session) => {
    await callAll(session, [{ name: "test_client_elicitation_defaults", arguments: {} }]);
  },

  // Multi-round-trip input requests (SEP-2322). The unrelated and no-result-type tools need nothing new.
  "sep-2322-client-request-state": async (session) => {
    await callAll(session, [
      { name: "test_mrtr_echo_state" },
      { name: "test_mrtr_no_state" },
      { name: "test_mrtr_unrelated" },
      { name: "test_mrtr_no_result_type" },
    ]);
  },

  // Mcp-Method / Mcp-Name on every POST (SEP-2243). Tools go through the host; the host does not
  // model resources or prompts yet, so those requests go straight through its SDK client.
  "http-standard-headers": async (session) => {
    await callAll(session, [{ name: "test_headers" }, { name: "my-hyphenated-tool" }]);
    const client = session.host.server(SERVER)!.requireClient();
    const { resources } = await client.listResources();
    for (const resource of resources) await client.readResource({ uri: resource.uri });
    const { prompts } = await client.listPrompts();
    for (const prompt of prompts) await client.getPrompt({ name: prompt.name });
  },

  // Mcp-Param-* mirroring of x-mcp-header parameters (SEP-2243): the runner names the calls.
  "http-custom-headers": async (session, context) => {
    await callAll(session, context.toolCalls ?? []);
  },

  // Tools with invalid x-mcp-header annotations must not be offered; the valid one must be.
  // Like a model, call whatever the host offers.
  "http-invalid-tool-headers": async (session) => {
    if (!session.tools.has("valid_tool")) throw new Error("the host does not offer valid_tool");
    await callEveryOfferedTool(session);
  },

  // Listing (and using) a tool whose schema has a network $ref must not fetch it (SEP-2106).
  "json-schema-ref-no-deref": async (session) => {
    const tool = session.tools.get("lookup_user");
    if (!tool) throw new Error("the host does not offer lookup_user");
    // The scenario server answers tools/list only; the call exercises argument validation, not the server.
    await call(session, "lookup_user", { id: "user-1" }).catch((error: unknown) => log(`lookup_user: ${describe(error)}`));
  },

  // The schema the host keeps for a tool must be the one the server sent, keyword for keyword.
  "json-schema-2020-12-preservation": async (session) => {
    const focal = session.tools.get("json_schema_2020_12_tool");
    if (!focal) throw new Error("the host does not offer json_schema_2020_12_tool");
    await callAll(session, [{ name: "json_schema_echo", arguments: { schema: focal.tool.inputSchema } }]);
  },
};

/**
 * Authorization scenarios (auth/*) and anything unknown: connect through the host
 * and use the tools it offers. For auth/* the server first ends in needs_auth;
 * the harness then does what a person does: runs the `auth` flow (see authorizeAsAPerson).
 */
const fallback: ScenarioRun = async (session) => {
  await callEveryOfferedTool(session);
};

/**
 * The effective configuration for one remote server, built directly rather than through
 * resolveConfig: settings validation loads arktype, which costs each client process about
 * half a second of CPU, and the requirement runs start some forty clients at once.
 * test/config covers the settings path; here only the host is under test.
 */
function effectiveConfig(url: string, transport: "http" | "sse", auth?: AuthConfig): EffectiveConfig {
  const file = "<conformance>";
  return {
    valid: true,
    exposure: "direct",
    contextBudget: DEFAULTS.contextBudget,
    features: Object.fromEntries(FEATURES.map((feature) => [feature, true])) as EffectiveConfig["features"],
    lifecycle: "eager",
    idleTimeoutMs: DEFAULTS.idleTimeoutMs,
    firstRequestWaitMs: DEFAULTS.firstRequestWaitMs,
    issues: [],
    connectTimeoutMs: CONNECT_TIMEOUT_MS,
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
    requestDeadlineMs: DEFAULTS.requestDeadlineMs,
    retry: RETRY,
    servers: [
      {
        name: SERVER,
        scope: "global",
        enabled: true,
        masked: false,
        transport,
        auth: auth?.type ?? "none",
        file,
        written: { url, transport, ...(auth && { auth }) },
        definition: { enabled: true, transport, url, headers: {}, ...(auth && { auth }) },
      },
    ],
    secrets: new Set(),
    sources: { globalPath: file, projectPath: file, projectTrusted: false },
  };
}

async function main(): Promise<number> {
  const url = process.argv.at(-1);
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
  if (!url || !/^https?:\/\//.test(url)) {
    log("usage: client.ts <server-url> (with MCP_CONFORMANCE_SCENARIO set)");
    return 2;
  }
  const context = parseContext(process.env.MCP_CONFORMANCE_CONTEXT);
  const transport = process.env.MCP_CONFORMANCE_TRANSPORT === "sse" ? "sse" : "http";
  log(
    `scenario ${scenario || "(none)"} at ${url} over ${transport}${process.env.MCP_CONFORMANCE_PROTOCOL_VERSION ? `, runner wire ${process.env.MCP_CONFORMANCE_PROTOCOL_VERSION}` : ""}`,
  );

  const root = await mkdtemp(join(tmpdir(), "pi-mcp-conformance-"));
  const authScenario = scenario.startsWith("auth/");
  const auth = authScenario ? await oauthSettings(scenario, context) : undefined;
  const config = effectiveConfig(url, transport, auth);
  const hostContext: HostContext = {
    cwd: process.cwd(),
    agentDir: join(root, "agent"),
    privateDir: join(root, "private"),
    config,
    redact: createRedactor(config.secrets),
    truncate: (text) => ({ text, truncated: false }),
    services: { ui: SCRIPTED_USER },
  };
  const tools = new Map<string, BridgedTool>();
  const sink: ToolSink = {
    register: (bridged) => {
      for (const tool of bridged) tools.set(tool.tool.name, tool);
    },
    deactivate: (names) => {
      for (const [key, tool] of tools) if (names.includes(tool.name)) tools.delete(key);
    },
  };
  const kernel = createKernel();
  const stateChanges = new Set<() => void>();
  const host = new McpHost(kernel, hostContext, sink, {
    statusChanged: () => {
      if (host.server(SERVER)?.state === "retrying") log(`retrying: ${host.server(SERVER)?.status().cause ?? "?"}`);
      for (const wake of [...stateChanges]) wake();
    },
  });
  /** Waits (woken by the host's state changes) until the server is in a state the host does not leave by itself. */
  const settle = () =>
    new Promise<void>((resolve) => {
      const check = () => {
        // No connection yet is not a final state: the host creates it once its core is loaded.
        const state = host.server(SERVER)?.state;
        if (state === undefined || !SETTLED.has(state)) return;
        clearTimeout(timer);
        stateChanges.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        stateChanges.delete(check);
        resolve();
      }, SETTLE_TIMEOUT_MS);
      stateChanges.add(check);
      check();
    });
  try {
    await host.start();
    await settle();
    const definition = config.servers[0]!.definition as RemoteDefinition;
    const store = new CredentialStore(hostContext.agentDir);
    // A step-up (403 insufficient_scope) or a changed authorization server sends the server back to
    // needs_auth mid-scenario: a person authorizes again, a bounded number of times.
    let authorizations = 0;
    for (;;) {
      while (authScenario && needsAuthorization(host) && authorizations <= MAX_REAUTHORIZATIONS) {
        authorizations++;
        await authorizeAsAPerson(host, definition, store);
        await settle();
      }
      const status = host.server(SERVER)?.status();
      if (status?.state !== "connected")
        throw new Error(`the server did not connect: ${status?.state ?? "unknown"}${status?.cause ? ` (${status.cause})` : ""}`);
      await host.flushTools();
      log(`connected: protocol ${status.protocolVersion ?? "?"}, tools: ${[...tools.keys()].join(", ") || "none"}`);
      try {
        await (SCENARIOS[scenario] ?? fallback)({ host, tools }, context);
        break;
      } catch (error) {
        if (!authScenario || !needsAuthorization(host) || authorizations > MAX_REAUTHORIZATIONS) throw error;
        log(`the scenario needs authorization again: ${describe(error)}`);
      }
    }
    log("scenario flow completed");
    return 0;
  } catch (error) {
    log(`failed: ${describe(error)}`);
    return 1;
  } finally {
    await host.shutdown();
    await rm(root, { recursive: true, force: true });
    log("host shut down");
  }
}

/** How many times the harness authorizes again after the first time (step-up, a new authorization server). */
const MAX_REAUTHORIZATIONS = 1;

function needsAuthorization(host: McpHost): boolean {
  const state = host.server(SERVER)?.state;
  return state === "needs_auth" || state === "needs_client_registration";
}

/**
 * The OAuth settings a person would write for the scenario: a loopback redirect on a free
 * port (a requirement run starts many clients at once), plus the client the scenario
 * expects: the pre-registered one it passes in its context, or its Client ID Metadata
 * Document URL.
 */
async function oauthSettings(scenario: string, context: ScenarioContext): Promise<AuthConfig> {
  const redirectUri = `http://127.0.0.1:${await freePort()}/mcp/oauth/callback`;
  if (typeof context.client_id === "string") {
    return {
      type: "oauth",
      redirectUri,
      clientId: context.client_id,
      ...(typeof context.client_secret === "string" && { clientSecret: context.client_secret }),
    };
  }
  if (scenario === "auth/basic-cimd")
    return { type: "oauth", redirectUri, clientId: "https://conformance-test.local/client-metadata.json" };
  return { type: "oauth", redirectUri };
}

/**
 * What a person does for a server in needs_auth: run `auth <server>` (the same flow as the
 * command). The browser is replaced by a fetch that follows the authorization server's
 * redirects to our loopback callback, as a browser would; then the server is reconnected.
 */
async function authorizeAsAPerson(host: McpHost, definition: RemoteDefinition, store: CredentialStore): Promise<void> {
  setBrowserOpener(async (url) => {
    let current = url;
    for (let hop = 0; hop < 10; hop++) {
      const response = await fetch(current, { redirect: "manual" });
      const location = response.headers.get("location");
      await response.body?.cancel().catch(() => undefined);
      if (!location || response.status < 300 || response.status >= 400) return;
      current = new URL(location, current).href;
      if (current.startsWith("http://127.0.0.1:") && new URL(current).pathname === "/mcp/oauth/callback") {
        await (await fetch(current)).body?.cancel().catch(() => undefined);
        return;
      }
    }
  });
  // Like a person, try once more when the network failed (a loaded requirement run drops connections).
  for (let attempt = 1; ; attempt++) {
    log("authorizing (the auth command's flow)");
    try {
      await authorize({
        server: SERVER,
        definition,
        store,
        print: (text) => log(text.split("\n")[0]!),
        timeoutMs: 20_000,
        connectTimeoutMs: CONNECT_TIMEOUT_MS,
      });
      log("authorized; reconnecting");
      break;
    } catch (error) {
      log(`authorization failed: ${describe(error)}`);
      if (attempt >= 2 || !/fetch failed|timed out/i.test(describe(error))) throw error;
    }
  }
  await host.reconnect(SERVER);
}

function parseContext(text: string | undefined): ScenarioContext {
  if (!text) return {};
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) ? (value as ScenarioContext) : {};
  } catch {
    log("MCP_CONFORMANCE_CONTEXT is not JSON; ignored");
    return {};
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error && !error.message.includes(error.cause.message) ? ` (cause: ${error.cause.message})` : "";
  return `${error.message}${cause}`;
}

// Exit explicitly: a transport that failed to close must not keep the runner waiting.
// (stderr to a pipe is synchronous on Linux and macOS, so nothing logged is lost.)
process.exit(await main());
