/**
 * The part of a plugin that lives in Pi's UI (renderers, footer, notices).
 * A plugin offers it as `piPart`, loaded on first use and only inside Pi
 * (src/pi), so the CLI and the kernel never load Pi's UI packages. Only
 * types come from Pi here.
 */
import type { ExtensionAPI, ExtensionContext, ToolDefinition } from "@earendil-works/pi-coding-agent";
import type { EffectiveConfig } from "./settings.ts";
import type { ConnectionStatus } from "./status.ts";
import type { PluginKernel } from "./hooks.ts";
import type { HostContext, Redactor } from "./types.ts";

/** Custom message types pi-mcp adds to a session (plugins write them, Pi parts draw them). */
export const MESSAGE_TYPES = Object.freeze({
  /** A prompt's messages (plugins/prompts). */
  prompt: "pi-mcp.prompt",
  /** A Resource Update Notice (plugins/resources). */
  resourceUpdate: "pi-mcp.resource-update",
});

/** The resources plugin's fixed Pi tools; server tools are `mcp__<server>__<tool>` (the tool-names plugin's names). */
export const RESOURCE_TOOLS = Object.freeze({
  list: "list_mcp_resources",
  templates: "list_mcp_resource_templates",
  read: "read_mcp_resource",
});

const SERVER_TOOL_PREFIX = "mcp__";

/** Whether pi-mcp draws the rows of the Pi tool `name` (a server tool or a resource tool). */
export function drawnByPiMcp(name: string): boolean {
  return name.startsWith(SERVER_TOOL_PREFIX) || Object.values(RESOURCE_TOOLS).includes(name as never);
}

/** The server and tool a server tool's Pi name says (`mcp__docs__search`), for a row whose tool is not registered. */
export function namedServerTool(piName: string): { server: string; tool: string } {
  const rest = piName.startsWith(SERVER_TOOL_PREFIX) ? piName.slice(SERVER_TOOL_PREFIX.length) : piName;
  const split = rest.indexOf("__");
  return split <= 0 ? { server: "", tool: rest } : { server: rest.slice(0, split), tool: rest.slice(split + 2) };
}

export type ToolRenderers = Pick<ToolDefinition, "renderCall" | "renderResult">;

/** Renderers for the tools of one host. */
export interface ToolRendering {
  /** A server tool: its server and original MCP tool name. */
  serverTool(server: string, tool: string, piName: string): ToolRenderers;
  /** A fixed tool (`read_mcp_resource`, ...): the server comes from the call's arguments. */
  fixedTool(piName: string): ToolRenderers;
  /**
   * A row of a pi-mcp tool that is not registered in this session (yet, or any
   * more): one drawn before a `/reload` or in a resumed session. Its server and
   * tool come from the stored result, else from its Pi name.
   */
  earlierTool(piName: string): ToolRenderers;
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
  toolRendering?(kernel: PluginKernel, redact: () => Redactor): ToolRendering;
  /** Follows one session's host. */
  observeSession?(ctx: SessionUi, host: ObservedHost): SessionObserver;
}
