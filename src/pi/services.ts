import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { ConversationImages, FixedTool, HostServices, PiToolRegistry, SessionServices, UiService } from "../kernel/services.ts";
import { piImageService } from "./images.ts";
import { piModelService } from "./model.ts";
import type { ToolRendering } from "../kernel/pi-part.ts";
import { toPiResult } from "./tools.ts";

/** Fixed tools (a plugin's own, like `read_mcp_resource`) registered with Pi, active only on request; `registered` is told of each. */
function piToolRegistry(pi: ExtensionAPI, rendering: ToolRendering | undefined, registered: (() => void) | undefined): PiToolRegistry {
  const defined = new Set<string>();
  return {
    define(tool: FixedTool) {
      pi.registerTool({
        name: tool.name,
        label: tool.label,
        description: tool.description,
        parameters: tool.parameters as never,
        ...rendering?.fixedTool(tool.name),
        execute: async (_id, params, signal, onUpdate) => {
          const outcome = await tool.execute((params ?? {}) as Record<string, unknown>, {
            signal,
            onProgress: (progress) =>
              onUpdate?.({ content: [{ type: "text", text: `progress ${progress.progress}` }], details: { progress } }),
          });
          return toPiResult(outcome, pi, outcome.details);
        },
      });
      registered?.();
      if (!defined.has(tool.name)) {
        defined.add(tool.name);
        // Pi activates a tool registered after start-up; a fixed tool waits until its plugin says so.
        pi.setActiveTools(pi.getActiveTools().filter((name) => name !== tool.name));
      }
    },
    setActive(name, active) {
      const current = pi.getActiveTools();
      if (active === current.includes(name)) return;
      pi.setActiveTools(active ? [...current, name] : current.filter((tool) => tool !== name));
    },
  };
}

function sessionServices(pi: ExtensionAPI, ctx: ExtensionContext, branchListeners: Set<() => void>): SessionServices {
  return {
    append: (customType, data) => pi.appendEntry(customType, data),
    entries: (customType) =>
      ctx.sessionManager
        .getBranch()
        .filter((entry) => entry.type === "custom" && (entry as { customType?: string }).customType === customType)
        .map((entry) => (entry as { data?: unknown }).data),
    queueMessage: (message) =>
      pi.sendMessage(
        { customType: message.customType, content: message.content, display: true, details: message.details },
        { deliverAs: "nextTurn" },
      ),
    // Without a turn to trigger, Pi stores the message on the branch now (or after a running turn): no replay needed.
    addMessage: (message) =>
      pi.sendMessage(
        { customType: message.customType, content: [...message.content], display: true, details: message.details },
        { triggerTurn: false },
      ),
    onBranchChange(listener) {
      branchListeners.add(listener);
      return () => branchListeners.delete(listener);
    },
    images: () => conversationImages(ctx.sessionManager),
  };
}

/**
 * The images of what the next model request carries: the active branch as
 * Pi builds its context (after the latest compaction), every message and
 * custom message that holds images.
 */
function conversationImages(sessions: ExtensionContext["sessionManager"]): ConversationImages {
  const data: string[] = [];
  let sinceAssistant = 0;
  let turn: string | undefined;
  for (const entry of sessions.buildContextEntries()) {
    let content: unknown;
    if (entry.type === "message") {
      if (entry.message.role === "assistant") {
        turn = entry.id;
        sinceAssistant = 0;
        continue;
      }
      content = (entry.message as { content?: unknown }).content;
    } else if (entry.type === "custom_message") content = entry.content;
    if (!Array.isArray(content)) continue;
    for (const item of content as { type?: unknown; data?: unknown }[]) {
      if (item?.type !== "image" || typeof item.data !== "string") continue;
      data.push(item.data);
      sinceAssistant++;
    }
  }
  return { data, sinceAssistant, turn };
}

/** Dialogs exist only where a person can answer; print and json modes get none. */
function uiService(ctx: ExtensionContext): UiService | undefined {
  if (!ctx.hasUI || (ctx.mode !== "tui" && ctx.mode !== "rpc")) return undefined;
  return {
    input: (title, placeholder, signal) => ctx.ui.input(title, placeholder, signal ? { signal } : undefined),
    select: (title, options, signal) => ctx.ui.select(title, [...options], signal ? { signal } : undefined),
    confirm: (title, message, signal) => ctx.ui.confirm(title, message, signal ? { signal } : undefined),
    notify: (text, level) => ctx.ui.notify(text, level),
  };
}

export function piServices(
  pi: ExtensionAPI,
  ctx: ExtensionContext,
  branchListeners: Set<() => void>,
  rendering?: ToolRendering,
  registered?: () => void,
): HostServices {
  const ui = uiService(ctx);
  const model = piModelService(ctx);
  return {
    piTools: piToolRegistry(pi, rendering, registered),
    session: sessionServices(pi, ctx, branchListeners),
    images: piImageService,
    ...(ui && { ui }),
    ...(model && { model }),
  };
}
