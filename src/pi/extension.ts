import { writeSync } from "node:fs";
import {
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_LINES,
  truncateHead,
  type ExtensionAPI,
  type ExtensionCommandContext,
  type ExtensionContext,
} from "@earendil-works/pi-coding-agent";
import { parseArgsStringToArgv } from "string-argv";
import { helpCommand, runCommandLine } from "../commands/index.ts";
import type { CommandEnvironment, CommandResult, CommandSpec, RuntimeControl } from "../kernel/commands.ts";
import { createKernel, credentialQueries, surfaceCommands, type KernelOptions } from "../composition.ts";
import { loadConfig } from "../config/load.ts";
import { agentDir } from "../config/paths.ts";
import { savedProjectTrust } from "../config/trust.ts";
import type { EffectiveConfig } from "../kernel/settings.ts";
import { importNotice } from "../import/notice.ts";
import type { SessionObserver } from "../kernel/pi-part.ts";
import type { Truncator } from "../kernel/types.ts";
import { McpHost, type HostCatalogs } from "../runtime/host.ts";
import { processPool } from "../runtime/pool.ts";
import { cacheEnabled, type CachedStart } from "../runtime/catalog-cache.ts";
import { CatalogStore } from "../runtime/catalog-store.ts";
import { settingsDigest } from "../config/settings-stamp.ts";
import type { CallOptions, ToolOutcome } from "../kernel/services.ts";
import { processSessionFolders, type SessionFolder } from "../runtime/session-folders.ts";
import { captureSdkConsole } from "../safety/sdk-output.ts";
import { createRedactor } from "../safety/text.ts";
import { completeArgumentsLive } from "./completion.ts";
import type { EarlierRenderers } from "./earlier-rows.ts";
import { piServices } from "./services.ts";
import { piToolSink } from "./tools.ts";

/**
 * Print mode has no UI (notify goes nowhere) and Pi moves console output to
 * stderr, so there the result is written straight to the process's own
 * stdout/stderr, and a failure sets the exit code. Elsewhere it is a notice.
 */
function showResult(ctx: ExtensionContext, result: CommandResult): void {
  if (ctx.mode === "print") {
    writeSync(result.exitCode === 0 ? 1 : 2, `${result.output}\n`);
    if (result.exitCode !== 0) process.exitCode = result.exitCode;
    return;
  }
  ctx.ui.notify(result.output, result.exitCode === 0 ? "info" : "error");
}

/** Pi's own limits for model-facing text; a single over-long line is cut by bytes. */
const piTruncate: Truncator = (text) => {
  const cut = truncateHead(text, { maxLines: DEFAULT_MAX_LINES, maxBytes: DEFAULT_MAX_BYTES });
  if (!cut.truncated) return { text, truncated: false };
  const head = cut.content || Buffer.from(text, "utf8").subarray(0, DEFAULT_MAX_BYTES).toString("utf8").replace(/\uFFFD$/, "");
  return { text: head, truncated: true };
};

/** The kernel options with the settings' `mcp.features` (switched-off feature plugins are left out). */
function withFeatures(options: KernelOptions, settings: EffectiveConfig | undefined): KernelOptions {
  return settings ? { ...options, features: settings.features } : options;
}

/**
 * The Pi side of pi-mcp: registers `/mcp` (which makes Pi 0.99.1+ skip its
 * built-in MCP extension), and at session start connects the configured
 * servers in the background and offers their tools to the model.
 */
export interface PiMcpRegistration {
  /** How rows of pi-mcp tools that are not registered (drawn before a `/reload`) are drawn, once the plugins' Pi parts loaded. */
  readonly earlierRows: Promise<EarlierRenderers>;
  /** Runs a call of a tool the Pi entry registered from a known catalog (it waits for this session's host). */
  callTool(piName: string, args: Record<string, unknown>, options: CallOptions): Promise<ToolOutcome>;
}

/**
 * The settings stamp of a session's settings, read around loading them: when
 * the files changed meanwhile there is none (what is recorded must belong to
 * exactly the settings the host runs with).
 */
async function loadStamped(ctx: ExtensionContext, load: () => Promise<EffectiveConfig>): Promise<{ config: EffectiveConfig; stamp: string | undefined }> {
  const stamp = () => settingsDigest({ agentDir: agentDir(), cwd: ctx.cwd, trusted: ctx.isProjectTrusted(), env: process.env });
  const before = stamp();
  const config = await load();
  return { config, stamp: stamp() === before ? before : undefined };
}

/**
 * `known`: the catalogs the Pi entry registered tools from while Pi loaded it
 * (persisted ones, or those a replaced session handed over); the host takes
 * them over and reconciles them with the live servers.
 */
export function registerPiMcp(pi: ExtensionAPI, kernelOptions: KernelOptions = {}, known?: CachedStart): PiMcpRegistration {
  captureSdkConsole(); // the SDK's console output never reaches Pi's terminal (see src/safety/sdk-output.ts)
  let config: EffectiveConfig | undefined;
  /** The settings stamp of the host's settings (undefined: unknown, nothing is recorded). */
  let stamp: string | undefined;
  const caching = cacheEnabled();
  let hostReady: Promise<McpHost> | undefined;
  const branchListeners = new Set<() => void>();
  /** The started host, for synchronous work (the system prompt); commands await `hostReady`. */
  let currentHost: McpHost | undefined;
  const sessionFolders = processSessionFolders();
  /** The current session's private folder, held while it lives. */
  let sessionFolder: SessionFolder | undefined;
  // Feature plugins own some commands; a kernel built now lists them (hosts build their own).
  const featureKernel = createKernel(kernelOptions);
  /** What plugins' Pi parts follow of the current session (the MCP Observer UI's footer and notices). */
  let observers: SessionObserver[] = [];
  const updateObservers = () => {
    for (const observer of observers) observer.update();
  };
  const currentRedactor = () => currentHost?.context.redact ?? createRedactor(config?.secrets ?? []);
  const featureParts = featureKernel.piParts();
  featureParts
    .then((parts) => {
      for (const part of parts) part.register?.(pi, currentRedactor);
    })
    .catch((error: unknown) => process.stderr.write(`pi-mcp: a plugin's Pi part failed to load: ${String(error)}\n`));
  // A tool registered from a known catalog is drawn as the server tool it is (its server and MCP name are known).
  const knownTools = new Map(known?.servers.flatMap((server) => server.tools.map((tool) => [tool.piName, { server: server.name, tool: tool.tool.name }] as const)) ?? []);
  const earlierRows = featureParts.then((parts): EarlierRenderers => {
    const rendering = parts.find((part) => part.toolRendering)?.toolRendering?.(featureKernel, currentRedactor);
    return (piName) => {
      const tool = knownTools.get(piName);
      return tool ? rendering?.serverTool(tool.server, tool.tool, piName) : rendering?.earlierTool(piName);
    };
  });
  let surface = surfaceCommands("pi", featureKernel);
  const commands = (): CommandSpec[] => [...surface, helpCommand(() => commands())];

  const environment = (ctx: ExtensionContext): CommandEnvironment => {
    const agent = agentDir();
    const projectTrusted = ctx.isProjectTrusted();
    return {
      surface: "pi",
      agentDir: agent,
      cwd: ctx.cwd,
      env: process.env,
      projectTrusted,
      savedTrust: savedProjectTrust(agent, ctx.cwd),
      credentials: credentialQueries(agent),
      progress: (text) => (ctx.mode === "print" ? void writeSync(1, `${text}\n`) : ctx.ui.notify(text, "info")),
      createKernel: async (settings) => createKernel(withFeatures(kernelOptions, settings)),
      loadConfig: async () => (config = await loadConfig({ agentDir: agent, cwd: ctx.cwd, projectTrusted, env: process.env })),
      ...(hostReady && { runtime: runtimeControl(hostReady, ctx) }),
    };
  };

  /** Commands may run before the background start finished: each waits for the host. */
  const runtimeControl = (ready: Promise<McpHost>, ctx: ExtensionContext): RuntimeControl => ({
    status: async () => {
      const current = await ready;
      return { config: current.config, servers: current.status(), extra: current.statusLines() };
    },
    reconnect: async (name) => (await ready).reconnect(name),
    host: () => ready,
    settled: async (timeoutMs) => (await ready).settled(timeoutMs),
    // The setting is already persisted; a failed connection never rolls it back.
    settingsChanged: async () => {
      const loaded = await loadStamped(ctx, () => environment(ctx).loadConfig());
      stamp = loaded.stamp;
      await (await ready).applyConfig(loaded.config, createRedactor(loaded.config.secrets));
      updateObservers();
    },
  });

  const startHost = async (ctx: ExtensionContext): Promise<McpHost> => {
    const stamped = await loadStamped(ctx, () => environment(ctx).loadConfig());
    const loaded = stamped.config;
    stamp = stamped.stamp;
    const agent = agentDir();
    await importNotice(ctx, agent, loaded); // servers only Pi's built-in mcp.json names: one notice per change, never connected
    // Held while the session lives: no sweep (of this Pi or another) removes it meanwhile.
    sessionFolder = await sessionFolders.claim(agent, ctx.sessionManager.getSessionId(), ctx.sessionManager.getSessionFile());
    const privateDir = sessionFolder.path;
    const kernel = createKernel(withFeatures(kernelOptions, loaded));
    // The session's commands are its features' (a feature switched off in the settings takes its commands along).
    surface = surfaceCommands("pi", kernel);
    const parts = await kernel.piParts();
    const redact = () => currentHost?.context.redact ?? context.redact;
    const rendering = parts.find((part) => part.toolRendering)?.toolRendering?.(kernel, redact);
    const services = piServices(pi, ctx, branchListeners, rendering);
    const context = { cwd: ctx.cwd, agentDir: agent, privateDir, config: loaded, redact: createRedactor(loaded.secrets), truncate: piTruncate, services };
    const notice = (text: string) => (ctx.hasUI ? ctx.ui.notify(text, "warning") : writeSync(2, `pi-mcp: ${text}\n`));
    const store = new CatalogStore(agent);
    const catalogs: HostCatalogs | undefined = caching ? { ...(known && { preloaded: known }), stamp: () => stamp, save: (snapshot) => store.save(snapshot) } : undefined;
    const host = new McpHost(kernel, context, piToolSink(pi, notice, rendering), { statusChanged: updateObservers }, processPool(), catalogs);
    observers = parts.flatMap((part) => (part.observeSession ? [part.observeSession(ctx, host)] : []));
    await host.start();
    currentHost = host;
    updateObservers();
    sessionFolders.sweepWhenDue(agent); // old session folders go in the background, at most once a day
    return host;
  };

  pi.registerCommand("mcp", {
    description: "Manage MCP servers (pi-mcp): /mcp help",
    getArgumentCompletions: (prefix) => completeArgumentsLive(prefix, commands(), config?.servers.map((server) => server.name) ?? [], () => hostReady),
    handler: async (args: string, ctx: ExtensionCommandContext) => {
      const argv = parseArgsStringToArgv(args);
      const result = await runCommandLine(commands(), argv.length > 0 ? argv : ["help"], environment(ctx));
      showResult(ctx, result);
    },
  });

  pi.on("session_start", (_event, ctx) => {
    if (hostReady) return; // RPC mode can announce one session twice
    // One event-loop turn later, so Pi's start never waits for MCP work.
    hostReady = new Promise((resolve) => setTimeout(resolve, 0)).then(() => startHost(ctx));
    hostReady.catch(() => undefined);
  });

  // The Instruction Snapshot: built synchronously from what has already synced, never waiting for a server.
  // Before the host has started it is the known catalogs' (those Pi was given at load).
  pi.on("before_agent_start", (event) => {
    const systemPrompt = currentHost ? currentHost.systemPrompt(event.systemPrompt) : event.systemPrompt + (known?.prompt ?? "");
    return systemPrompt === event.systemPrompt ? undefined : { systemPrompt };
  });

  pi.on("session_tree", () => {
    for (const listener of branchListeners) listener();
  });

  pi.on("session_shutdown", async (event, ctx) => {
    const ready = hostReady;
    hostReady = undefined;
    currentHost = undefined;
    for (const observer of observers) observer.stop();
    observers = [];
    const current = await ready?.catch(() => undefined);
    if (current && event.reason === "quit") await current.shutdown(undefined, "quit");
    else if (current) {
      // Replaced sessions (/reload, /new, /resume, /fork) hand their live connections to the next one, but only
      // those whose definition is still the one in settings.json now (re-read: it may have changed since the session started).
      const settings = await loadStamped(ctx, () => environment(ctx).loadConfig()).catch(() => undefined);
      await current.shutdown(undefined, "replaced", { ...(settings && { settings: settings.config }), ...(settings?.stamp !== undefined && { stamp: settings.stamp }) });
    }
    // After the host finished its files: a run without a saved session removes its folder when it ends.
    const folder = sessionFolder;
    sessionFolder = undefined;
    await sessionFolders.ended(folder, event.reason === "quit");
  });

  return {
    earlierRows,
    async callTool(piName, args, options) {
      const ready = hostReady;
      if (!ready) throw new Error(`${piName}: this session's MCP host has ended`);
      return (await ready).callTool(piName, args, options);
    },
  };
}
