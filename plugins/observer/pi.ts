/*
 * The MCP Observer UI, Pi side (the observer plugin's `piPart`, loaded only
 * inside Pi): tool renderers for `registerTool` (TUI and HTML export),
 * message renderers for prompts and Resource Update Notices (TUI), and the
 * footer health and Attention Notices (TUI only). Print, JSON and RPC modes
 * get none of the observer-only output. Observer copy is safe text
 * (src/safety/text.ts): terminal controls stripped, exact secrets from
 * settings redacted; model-visible content and session data stay as they are.
 */
import type { ExtensionAPI, Theme } from "@earendil-works/pi-coding-agent";
import type { Component } from "@earendil-works/pi-tui";
import type { PluginKernel } from "../../src/kernel/hooks.ts";
import {
  MESSAGE_TYPES,
  namedServerTool,
  type ObservedHost,
  type PiPart,
  type SessionObserver,
  type SessionUi,
  type ToolRenderers,
  type ToolRendering,
} from "../../src/kernel/pi-part.ts";
import type { RenderContext, RenderModel, RenderResult, Redactor } from "../../src/kernel/types.ts";
import { safeText } from "../../src/safety/text.ts";
import {
  promptMessageComponent,
  resourceUpdateComponent,
  toolCallComponent,
  toolResultComponent,
  type Clean,
  type RenderOptionsLike,
} from "./components.ts";
import { attentionNotices, footerText, healthOf, type AttentionMemory } from "./health.ts";
import { FIXED_TOOL_OPERATIONS, blankModel } from "./model.ts";
import { isRecord, ownValue } from "../../src/safety/keys.ts";

export type { ObservedHost, ToolRendering } from "../../src/kernel/pi-part.ts";

/** The key of pi-mcp's footer status. */
export const FOOTER_STATUS_KEY = "pi-mcp";

/** Observer copy for a redactor: safe text, tabs as spaces. */
export function observerClean(redact: Redactor): Clean {
  return (text) => safeText(text, redact).replace(/\t/g, "  ");
}

interface RenderContextLike extends RenderOptionsLike {
  readonly args?: unknown;
  readonly isError?: boolean;
}

/** Tool rows built on the kernel's `render` hook (this plugin builds them; later taps refine them). */
export function toolRendering(kernel: PluginKernel, redact: () => Redactor): ToolRendering {
  const model = (context: RenderContext): RenderModel => kernel.hooks.render.call(blankModel(context), context);
  const renderers = (
    where: (args: Record<string, unknown>, details: Readonly<Record<string, unknown>> | undefined) => { server: string; operation: string },
    tool: string,
  ): ToolRenderers => ({
    renderCall(args: unknown, theme: Theme, context: RenderContextLike): Component {
      const record = asRecord(args);
      const context_: RenderContext = {
        ...where(record, undefined),
        tool,
        args: record,
        result: undefined,
        partial: true,
        expanded: context?.expanded === true,
        redact: redact(),
      };
      return toolCallComponent(model(context_), theme, observerClean(redact()), context ?? {});
    },
    renderResult(
      result: { content?: unknown; details?: unknown; isError?: boolean },
      options: { expanded: boolean; isPartial: boolean },
      theme: Theme,
      context: RenderContextLike,
    ): Component {
      const record = asRecord(context?.args);
      const details = asRecord(result.details);
      const persisted: RenderResult = {
        content: Array.isArray(result.content) ? result.content.filter(isRecord) : [],
        details,
        isError: context?.isError ?? result.isError === true,
      };
      const context_: RenderContext = {
        ...where(record, details),
        tool,
        args: record,
        result: persisted,
        partial: options.isPartial,
        expanded: options.expanded,
        redact: redact(),
      };
      return toolResultComponent(model(context_), theme, observerClean(redact()), { ...context, expanded: options.expanded });
    },
  });
  const fixedTool = (piName: string) =>
    renderers((args, details) => {
      const server = typeof args.server === "string" ? args.server : typeof details?.server === "string" ? details.server : "";
      return { server, operation: ownValue(FIXED_TOOL_OPERATIONS, piName) ?? piName };
    }, piName);
  return {
    serverTool: (server, tool, piName) => renderers(() => ({ server, operation: tool }), piName),
    fixedTool,
    earlierTool: (piName) =>
      ownValue(FIXED_TOOL_OPERATIONS, piName) !== undefined
        ? fixedTool(piName)
        : renderers((_args, details) => {
            // The stored result names the server and tool exactly; a call row alone has only its Pi name.
            const named = namedServerTool(piName);
            const server = typeof details?.server === "string" ? details.server : named.server;
            return { server, operation: typeof details?.tool === "string" ? details.tool : named.tool };
          }, piName),
  };
}

/**
 * Prompt and Resource Update Notice renderers (TUI; HTML export keeps the
 * messages' content). They read only the persisted details: nothing is
 * invoked, read or re-delivered.
 */
export function registerObserverMessages(pi: ExtensionAPI, redact: () => Redactor): void {
  pi.registerMessageRenderer(MESSAGE_TYPES.prompt, (message, options, theme) =>
    promptMessageComponent(message.details, theme, observerClean(redact()), options),
  );
  pi.registerMessageRenderer(MESSAGE_TYPES.resourceUpdate, (message, options, theme) =>
    resourceUpdateComponent(message.details, theme, observerClean(redact()), options),
  );
}

/** Announced conditions per project, for the whole process: a reload does not announce them again. */
const MEMORY = Symbol.for("pi-mcp.attention-notices");

function memoryFor(cwd: string): AttentionMemory {
  const global = globalThis as { [MEMORY]?: Map<string, AttentionMemory> };
  global[MEMORY] ??= new Map();
  let memory = global[MEMORY].get(cwd);
  if (!memory) {
    memory = { servers: new Map() };
    global[MEMORY].set(cwd, memory);
  }
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
export class HealthObserver implements SessionObserver {
  private footer: string | undefined;
  private active = true;

  constructor(
    private readonly ctx: SessionUi,
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

/** The observer's part in Pi: renderers, the footer and Attention Notices. */
export const observerPiPart: PiPart = {
  register: registerObserverMessages,
  toolRendering,
  observeSession: (ctx, host) => new HealthObserver(ctx, host),
};

function asRecord(value: unknown): Record<string, unknown> {
  return isRecord(value) ? value : {};
}
