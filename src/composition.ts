import { Kernel, type KernelPlugin } from "./kernel/kernel.ts";
import { registeredPlugins } from "./kernel/registry.ts";
import type { CommandSpec, Surface } from "./kernel/commands.ts";
import { FEATURES, type EffectiveConfig, type Feature } from "./kernel/settings.ts";
import { commandsFor } from "./commands/index.ts";
import { RUNTIME_COMMANDS } from "./commands/runtime.ts";
import { stdioTransportPlugin } from "../plugins/transports/stdio.ts";
import { sseTransportPlugin, streamableHttpTransportPlugin } from "../plugins/transports/http.ts";
import { BearerAuthPlugin } from "../plugins/auth-bearer/index.ts";
import { OAuthPlugin } from "../plugins/auth-oauth/index.ts";

/** The stored OAuth credentials, as commands ask about them (the auth-oauth plugin's store). */
export { credentialQueries } from "../plugins/auth-oauth/store.ts";
import { ToolNamesPlugin } from "../plugins/tool-names/index.ts";
import { ResultMappingPlugin } from "../plugins/result-mapping/index.ts";
import { SpillPlugin } from "../plugins/spill/index.ts";
import { ResourcesPlugin } from "../plugins/resources/index.ts";
import { RootsPlugin } from "../plugins/roots/index.ts";
import { LoggingPlugin } from "../plugins/logging/index.ts";
import { InstructionsPlugin } from "../plugins/instructions/index.ts";
import { PromptsPlugin } from "../plugins/prompts/index.ts";
import { CompletionPlugin } from "../plugins/completion/index.ts";
import { SamplingPlugin } from "../plugins/sampling/index.ts";
import { ElicitationPlugin } from "../plugins/elicitation/index.ts";
import { ObserverPlugin } from "../plugins/observer/index.ts";

/**
 * The composition root: the one place that lists pi-mcp's internal plugins.
 * Users switch feature plugins off in their settings (`mcp.features`), tests
 * leave out any internal plugin by name, and both may add plugins of their own.
 */
export interface KernelOptions {
  /** Names of internal plugins to leave out (tests). */
  readonly disable?: readonly string[];
  /** The settings' `mcp.features`: a feature set to false is left out. */
  readonly features?: EffectiveConfig["features"];
  /** Extra plugins (test doubles), applied after the internal ones and the registered ones. */
  readonly plugins?: readonly KernelPlugin[];
}

/** The plugins every host has: transports, authentication, tool names, result mapping, spill. */
function corePlugins(): KernelPlugin[] {
  return [
    stdioTransportPlugin(),
    streamableHttpTransportPlugin(),
    sseTransportPlugin(),
    new BearerAuthPlugin(),
    new OAuthPlugin(),
    new ToolNamesPlugin(),
    new ResultMappingPlugin(),
    new SpillPlugin(),
  ];
}

/** How a feature plugin is made: by its name, as a plugin of that name. */
type FeatureLoaders = { readonly [F in Feature]: () => KernelPlugin & { readonly name: F } };

/**
 * How each feature plugin (src/kernel/settings.ts, FEATURES) is loaded, by
 * name: a name without a loader, a loader without a name, or a plugin named
 * otherwise than its row does not compile. Which of them a host applies is
 * decided in createKernel from the settings' `mcp.features`.
 */
const FEATURE_LOADERS: FeatureLoaders = {
  resources: () => new ResourcesPlugin(),
  roots: () => new RootsPlugin(),
  logging: () => new LoggingPlugin(),
  instructions: () => new InstructionsPlugin(),
  prompts: () => new PromptsPlugin(),
  completion: () => new CompletionPlugin(),
  sampling: () => new SamplingPlugin(),
  elicitation: () => new ElicitationPlugin(),
  observer: () => new ObserverPlugin(),
};

/** Internal plugins in the order they are applied: the core ones, then the feature plugins in FEATURES order. */
export function internalPlugins(): KernelPlugin[] {
  return [...corePlugins(), ...FEATURES.map((feature) => FEATURE_LOADERS[feature]())];
}

/** Whether the settings' `mcp.features` leave a feature plugin in (vite's `apply`: each is on unless set to false). */
function applies(feature: Feature, features: KernelOptions["features"]): boolean {
  return features?.[feature] !== false;
}

export function createKernel(options: KernelOptions = {}): Kernel {
  const switchedOff = FEATURES.filter((feature) => !applies(feature, options.features));
  const disabled = new Set([...(options.disable ?? []), ...switchedOff]);
  const internal = internalPlugins();
  for (const name of disabled) {
    if (!internal.some((plugin) => plugin.name === name)) throw new Error(`unknown internal plugin "${name}"`);
  }
  const enabled = internal.filter((plugin) => !disabled.has(plugin.name));
  return new Kernel([...enabled, ...registeredPlugins(), ...(options.plugins ?? [])]);
}

/** Commands that need the runtime (connections), beside the configuration core. */
export function runtimeCommands(): readonly CommandSpec[] {
  return RUNTIME_COMMANDS;
}

/**
 * Every command of a surface: the core's, the runtime's and the plugins'
 * (`KernelPlugin.commands`), in help order. `/mcp` runs exactly these; the
 * CLI's lazily loaded subcommands are these too (a test holds them to it).
 */
export function surfaceCommands(surface: Surface, kernel: Kernel = createKernel()): CommandSpec[] {
  return commandsFor(surface, [...RUNTIME_COMMANDS, ...kernel.commands]);
}
