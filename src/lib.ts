// The public library for third parties: names only, no side effects.
export { Kernel, STAGE, type KernelPlugin } from "./kernel/kernel.ts";
export { registerPlugin } from "./kernel/registry.ts";
export type { KernelHooks, HookName } from "./kernel/hooks.ts";
export { PiMcpError, PluginHookError } from "./kernel/errors.ts";
export type * from "./kernel/types.ts";
export type { EffectiveConfig, ServerDefinition, ServerEntry, ConfigIssue } from "./config/types.ts";
export { MESSAGE_TYPES } from "./kernel/pi-part.ts";
export type { PiPart, SessionObserver, SessionUi, ObservedHost, ToolRendering, ToolRenderers } from "./kernel/pi-part.ts";
export type { CommandSpec, CompletionItem, LiveCompletionRequest } from "./commands/types.ts";
