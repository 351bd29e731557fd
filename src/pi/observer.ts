/*
 * The MCP Observer UI, Pi side: tool renderers for `registerTool` (TUI and
 * HTML export), message renderers for prompts and Resource Update Notices
 * (TUI), and the footer health and Attention Notices (TUI only). Print, JSON
 * and RPC modes get none of the observer-only output. Observer copy is safe
 * text (src/safety/text.ts): terminal controls stripped, exact secrets from
 * settings redacted; model-visible content and session data stay as they are.
 */
import type { ExtensionAPI, ExtensionContext, Theme, ToolDefinition } from "@earendil-works/pi-coding-agent";
import type { Component } from "@earendil-works/pi-tui";
import type { EffectiveConfig } from "../config/types.ts";
import type { Kernel } from "../kernel/kernel.ts";
import type { HostContext, RenderContext, RenderModel, RenderResult, Redactor } from "../kernel/types.ts";
import type { ConnectionStatus } from "../runtime/connection.ts";
import { safeText } from "../safety/text.ts";
import { FIXED_TOOL_OPERATIONS, blankModel } from "../../plugins/observer/index.ts";
import { promptMessageComponent, resourceUpdateComponent, toolCallComponent, toolResultComponent, type Clean, type RenderOptionsLike } from "../../plugins/observer/components.ts";
import { attentionNotices, footerText, healthOf, type AttentionMemory } from "../../plugins/observer/health.ts";
import { PROMPT_MESSAGE_TYPE } from "../../plugins/prompts/index.ts";

/** The custom message type of Resource Update Notices (plugins/resources). */
export const RESOURCE_UPDATE_MESSAGE_TYPE = "pi-mcp.resource-update";
/** The key of pi-mcp's footer status. */
export const FOOTER_STATUS_KEY = "pi-mcp";

/** Observer copy for a redactor: safe text, tabs as spaces. */
export function observerClean(redact: Redactor): Clean {
  return (text) => safeText(text, redact).replace(/\t/g, "  ");
}

export type ToolRenderers = Pick<ToolDefinition, "renderCall" | "renderResult">;

/** Renderers for the tools of one host, or undefined when the observer plugin is switched off. */
export interface ToolRendering {
  /** A server tool: its server and original MCP tool name. */
  serverTool(server: string, tool: string, piName: string): ToolRenderers;
  /** A fixed tool (`read_mcp_resource`, ...): the server comes from the call's arguments. */
  fixedTool(piName: string): ToolRenderers;
}

interface RenderContextLike extends RenderOptionsLike {
  readonly args?: unknown;
  readonly isError?: boolean;
}

export function toolRendering(kernel: Kernel, redact: () => Redactor): ToolRendering | undefined {
  if (!kernel.has("observer")) return undefined;
  const model = (context: RenderContext): RenderModel => kernel.hooks.render.call(blankModel(context), context);
  const renderers = (where: (args: Record<string, unknown>, details: Readonly<Record<string, unknown>> | undefined) => { server: string; operation: string }, tool: string): ToolRenderers => ({
    renderCall(args: unknown, theme: Theme, context: RenderContextLike): Component {
      const record = asRecord(args);
      const context_: RenderContext = { ...where(record, undefined), tool, args: record, result: undefined, partial: true, expanded: context?.expanded === true, redact: redact() };
      return toolCallComponent(model(context_), theme, observerClean(redact()), context ?? {});
    },
    renderResult(result: { content?: unknown; details?: unknown; isError?: boolean }, options: { expanded: boolean; isPartial: boolean }, theme: Theme, context: RenderContextLike): Component {
      const record = asRecord(context?.args);
      const details = asRecord(result.details);
      const persisted: RenderResult = {
        content: Array.isArray(result.content) ? result.content.filter(isRecord) : [],
        details,
        isError: context?.isError ?? result.isError === true,
      };
      const context_: RenderContext = { ...where(record, details), tool, args: record, result: persisted, partial: options.isPartial, expanded: options.expanded, redact: redact() };
      return toolResultComponent(model(context_), theme, observerClean(redact()), { ...context, expanded: options.expanded });
    },
  });
  return {
    serverTool: (server, tool, piName) => renderers(() => ({ server, operation: tool }), piName),
    fixedTool: (piName) =>
      renderers((args, details) => {
        const server = typeof args.server === "string" ? args.server : typeof details?.server === "string" ? details.server : "";
        return { server, operation: FIXED_TOOL_OPERATIONS[piName] ?? piName };
      }, piName),
  };
}

/**
 * Prompt and Resource Update Notice renderers (TUI; HTML export keeps the
 * messages' content). They read only the persisted details: nothing is
 * invoked, read or re-delivered.
 */
export function registerObserverMessages(pi: ExtensionAPI, redact: () => Redactor): void {
  pi.registerMessageRenderer(PROMPT_MESSAGE_TYPE, (message, options, theme) => promptMessageComponent(message.details, theme, observerClean(redact()), options));
  pi.registerMessageRenderer(RESOURCE_UPDATE_MESSAGE_TYPE, (message, options, theme) => resourceUpdateComponent(message.details, theme, observerClean(redact()), options));
}

/** What the health observer reads of a host. */
export interface ObservedHost {
  readonly config: EffectiveConfig;
  readonly context: HostContext;
  status(): ConnectionStatus[];
}

/** Announced conditions per project, for the whole process: a reload does not announce them again. */
const MEMORY = Symbol.for("pi-mcp.attention-notices");

function memoryFor(cwd: string): AttentionMemory {
  const global = globalThis as { [MEMORY]?: Map<string, AttentionMemory> };
  const all = (global[MEMORY] ??= new Map());
  let memory = all.get(cwd);
  if (!memory) all.set(cwd, (memory = { servers: new Map() }));
  return memory;
}

/** Forgets announced conditions (tests). */
export function resetAttentionMemory(): void {
  (globalThis as { [MEMORY]?: Map<string, AttentionMemory> })[MEMORY]?.clear();
}

/**
 * Footer health and Attention Notices for one session, in the TUI only. The
 * footer is set only when its text changes; a notice is sent once per
 * condition (see plugins/observer/health.ts).
 */
export class HealthObserver {
  private footer: string | undefined;
  private active = true;

  constructor(
    private readonly ctx: Pick<ExtensionContext, "mode" | "hasUI" | "cwd" | "ui">,
    private readonly host: ObservedHost,
  ) {}

  /** Only the interactive TUI shows observer-only output. */
  get enabled(): boolean {
    return this.active && this.ctx.mode === "tui" && this.ctx.hasUI;
  }

  /** Call on every status change (and after settings changed). */
  update(): void {
    if (!this.enabled) return;
    try {
      const statuses = this.host.status();
      const text = footerText(healthOf(this.host.config, statuses));
      if (text !== this.footer) {
        this.footer = text;
        this.ctx.ui.setStatus(FOOTER_STATUS_KEY, text);
      }
      for (const notice of attentionNotices(memoryFor(this.ctx.cwd), this.host.config, statuses, this.host.context.redact)) {
        this.ctx.ui.notify(notice.text, notice.level);
      }
    } catch {
      // A replaced session's UI may be gone; the observer never breaks the host.
    }
  }

  /** The session ended: nothing more is shown through its UI. */
  stop(): void {
    this.active = false;
  }
}

function asRecord(value: unknown): Record<string, unknown> {
  return isRecord(value) ? value : {};
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
