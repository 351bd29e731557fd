// The public library for third parties: names only, no side effects. Everything here is the
// kernel's contract (src/kernel); the runtime behind it is not exported.
export { Kernel, STAGE, type KernelPlugin } from "./kernel/kernel.ts";
export { registerPlugin } from "./kernel/registry.ts";
export type { KernelHooks, HookName, PluginKernel } from "./kernel/hooks.ts";
export { ERROR_CODES, PiMcpError, PluginHookError, type PiMcpErrorCode } from "./kernel/errors.ts";
export type * from "./kernel/types.ts";
export type * from "./kernel/host.ts";
export { hostState, type HostState } from "./kernel/host-state.ts";
export type { ConnectionState, ConnectionStatus } from "./kernel/status.ts";
export type { EffectiveConfig, ServerDefinition, ServerEntry, ConfigIssue } from "./kernel/settings.ts";
export { MESSAGE_TYPES } from "./kernel/pi-part.ts";
export type { PiPart, SessionObserver, SessionUi, ObservedHost, ToolRendering, ToolRenderers } from "./kernel/pi-part.ts";
export type { CommandSpec, CommandEnvironment, CommandResult, CompletionItem, LiveCompletionRequest } from "./kernel/commands.ts";
