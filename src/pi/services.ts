import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { FixedTool, HostServices, PiToolRegistry, SessionServices, UiService } from "../kernel/services.ts";
import { piModelService } from "./model.ts";
import type { ToolRendering } from "../kernel/pi-part.ts";
import { toPiResult } from "./tools.ts";

/** Fixed tools (a plugin's own, like `read_mcp_resource`) registered with Pi, active only on request. */
function piToolRegistry(pi: ExtensionAPI, rendering: ToolRendering | undefined): PiToolRegistry {
  const defined = new Set<string>();
  return {
    define(tool: FixedTool) {
      pi.registerTool({
        name: tool.name,
        label: tool.label,
        description: tool.description,
        parameters: tool.parameters as never,
        ...rendering?.fixedTool(tool.name),
        execute: async (_id, params, signal, onUpdate) =>
          toPiResult(
            await tool.execute((params ?? {}) as Record<string, unknown>, {
              signal,
              onProgress: (progress) => onUpdate?.({ content: [{ type: "text", text: `progress ${progress.progress}` }], details: { progress } }),
            }),
            pi,
          ),
      });
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
      pi.sendMessage({ customType: message.customType, content: message.content, display: true, details: message.details }, { deliverAs: "nextTurn" }),
    // Without a turn to trigger, Pi stores the message on the branch now (or after a running turn): no replay needed.
    addMessage: (message) =>
      pi.sendMessage({ customType: message.customType, content: [...message.content], display: true, details: message.details }, { triggerTurn: false }),
    onBranchChange(listener) {
      branchListeners.add(listener);
      return () => branchListeners.delete(listener);
    },
  };
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

export function piServices(pi: ExtensionAPI, ctx: ExtensionContext, branchListeners: Set<() => void>, rendering?: ToolRendering): HostServices {
  const ui = uiService(ctx);
  const model = piModelService(ctx);
  return { piTools: piToolRegistry(pi, rendering), session: sessionServices(pi, ctx, branchListeners), ...(ui && { ui }), ...(model && { model }) };
}
