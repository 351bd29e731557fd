/**
 * The part of a plugin that lives in Pi's UI (renderers, footer, notices).
 * A plugin offers it as `piPart`, loaded on first use and only inside Pi
 * (src/pi), so the CLI and the kernel never load Pi's UI packages. Only
 * types come from Pi here.
 */
import type { ExtensionAPI, ExtensionContext, ToolDefinition } from "@earendil-works/pi-coding-agent";
import type { EffectiveConfig } from "../config/types.ts";
import type { ConnectionStatus } from "../runtime/connection.ts";
import type { Kernel } from "./kernel.ts";
import type { HostContext, Redactor } from "./types.ts";

/** Custom message types pi-mcp adds to a session (plugins write them, Pi parts draw them). */
export const MESSAGE_TYPES = Object.freeze({
  /** A prompt's messages (plugins/prompts). */
  prompt: "pi-mcp.prompt",
  /** A Resource Update Notice (plugins/resources). */
  resourceUpdate: "pi-mcp.resource-update",
});

export type ToolRenderers = Pick<ToolDefinition, "renderCall" | "renderResult">;

/** Renderers for the tools of one host. */
export interface ToolRendering {
  /** A server tool: its server and original MCP tool name. */
  serverTool(server: string, tool: string, piName: string): ToolRenderers;
  /** A fixed tool (`read_mcp_resource`, ...): the server comes from the call's arguments. */
  fixedTool(piName: string): ToolRenderers;
}

/** What a session observer reads of a host. */
export interface ObservedHost {
  readonly config: EffectiveConfig;
  readonly context: HostContext;
  status(): ConnectionStatus[];
}

/** Follows one session's host: told about every status change, stopped when the session ends. */
export interface SessionObserver {
  update(): void;
  stop(): void;
}

export type SessionUi = Pick<ExtensionContext, "mode" | "hasUI" | "cwd" | "ui">;

export interface PiPart {
  /** Once, when pi-mcp registers with Pi (message renderers and the like). `redact` gives the current redactor. */
  register?(pi: ExtensionAPI, redact: () => Redactor): void;
  /** Renderers for the tool rows of one host (the first part that offers them draws them). */
  toolRendering?(kernel: Kernel, redact: () => Redactor): ToolRendering;
  /** Follows one session's host. */
  observeSession?(ctx: SessionUi, host: ObservedHost): SessionObserver;
}
