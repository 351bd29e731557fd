/**
 * Tool rows Pi draws before pi-mcp's tools are registered (or registered
 * without renderers: those of a known catalog, registered while Pi loads the
 * extension, before the core that draws them has loaded). After `/reload`
 * Pi rebuilds the transcript before `session_start`, and a resumed session
 * is drawn at once, while pi-mcp's tools (and their renderers) are registered
 * only when the core has loaded and the servers are back. Pi 1.6 asks tool
 * renderer resolvers how every tool's rows are drawn, registered or not; this
 * one is registered while the extension loads (cheaply: it needs only the tool
 * names, nothing of the core) and answers for pi-mcp's tools that have no
 * registered renderers: a one-line placeholder until the core has loaded,
 * then pi-mcp's rendering of an earlier row (server and tool from the stored
 * result), and the tool's own renderers once it is registered again. A row is
 * redrawn (its render context's `invalidate`) whenever that changes. Pi 0.84
 * has no resolvers: there, rows from before a reload keep Pi's default look.
 */
import type { ExtensionAPI, Theme } from "@earendil-works/pi-coding-agent";
import type { Component } from "@earendil-works/pi-tui";
import { drawnByPiMcp, type ToolRenderers } from "../kernel/pi-part.ts";

/** The core's renderers for a row of a pi-mcp tool that is not registered. */
export type EarlierRenderers = (piName: string) => ToolRenderers | undefined;

export interface EarlierRows {
  /** The core has loaded: rows use its rendering of earlier rows until their tool is registered. */
  ready(earlier: EarlierRenderers): void;
  /** A tool was registered: waiting rows look again for their tool's own renderers (once per event-loop turn). */
  toolRegistered(): void;
}

type Resolver = (toolName: string, next: () => ToolRenderers | undefined) => ToolRenderers | undefined;
interface RowContext {
  readonly toolCallId?: string;
  readonly invalidate?: () => void;
}

/** One line of text cut to the width (tool names are ASCII), then coloured. */
function line(text: string, colour: (text: string) => string): Component {
  return { render: (width) => [colour(text.slice(0, Math.max(0, width)))], invalidate() {} };
}

const NOTHING: Component = { render: () => [], invalidate() {} };

export function drawEarlierRows(pi: ExtensionAPI): EarlierRows {
  let earlier: EarlierRenderers | undefined;
  /** Rows drawn without their tool's own renderers, by tool call: how to redraw each. */
  const waiting = new Map<string, () => void>();
  let redrawQueued = false;
  const redraw = () => {
    for (const invalidate of [...waiting.values()]) invalidate();
  };

  /** The renderers a row uses now: its tool's own, else the core's for earlier rows (none before the core loaded). */
  const current = (toolName: string, next: () => ToolRenderers | undefined, context: RowContext | undefined): ToolRenderers | undefined => {
    const own = next();
    const id = context?.toolCallId;
    if (own?.renderCall || own?.renderResult) {
      if (id !== undefined) waiting.delete(id);
      return own;
    }
    if (id !== undefined && context?.invalidate) waiting.set(id, context.invalidate);
    return earlier?.(toolName);
  };

  const resolver: Resolver = (toolName, next) => {
    const own = next();
    // Pi answers with the tool's definition: one registered from a known catalog while Pi loaded has no renderers of its own.
    if (own?.renderCall || own?.renderResult || !drawnByPiMcp(toolName)) return own;
    return {
      renderCall(args, theme: Theme, context) {
        const draw = current(toolName, next, context)?.renderCall;
        return draw ? draw(args, theme, context) : line(`MCP ${toolName}`, (text) => theme.fg("toolTitle", text));
      },
      renderResult(result, options, theme: Theme, context) {
        const draw = current(toolName, next, context)?.renderResult;
        return draw ? draw(result, options, theme, context) : NOTHING;
      },
    };
  };
  const register = (pi as { registerToolRenderer?: (resolver: Resolver) => void }).registerToolRenderer;
  if (typeof register === "function") register.call(pi, resolver);

  return {
    ready(renderers) {
      earlier = renderers;
      redraw();
    },
    toolRegistered() {
      if (redrawQueued || waiting.size === 0) return;
      redrawQueued = true;
      setImmediate(() => {
        redrawQueued = false;
        redraw();
      });
    },
  };
}
