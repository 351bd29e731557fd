/*
 * The MCP Observer UI, drawn with pi-tui: tool rows from a RenderModel, and
 * the prompt and Resource Update Notice messages from their persisted
 * details. Every string a server (or a tap) provided passes `clean` here —
 * terminal controls stripped, settings' secrets redacted — and only then gets
 * the theme's colours. What the model sees is never touched.
 */
import type { Theme, ThemeColor } from "@earendil-works/pi-coding-agent";
import { Box, truncateToWidth, wrapTextWithAnsi, type Component } from "@earendil-works/pi-tui";
import type { RenderModel, RenderState } from "../../src/kernel/types.ts";
import { boundedLines, formatBytes, LIMITS, plural } from "./model.ts";
import { base64Bytes } from "../../src/kernel/protocol.ts";
import { isRecord } from "../../src/safety/keys.ts";

/** Observer copy: text safe to show a person (see src/safety/text.ts), tabs as spaces. */
export type Clean = (text: string) => string;

/** What the renderers read of Pi's render options (Pi 0.84 has no key hints). */
export interface RenderOptionsLike {
  readonly expanded?: boolean;
  readonly keyHint?: (keybinding: "app.tools.expand", description: string) => string;
  readonly keyText?: (keybinding: "app.tools.expand") => string;
}

/** `ctrl+o to expand`, where Pi knows the user's key for it. */
function expandHint(options: RenderOptionsLike): string | undefined {
  return options.keyText?.("app.tools.expand") ? options.keyHint?.("app.tools.expand", "to expand") : undefined;
}

/** A component drawn from a function of the width, kept per width until invalidated (a theme change). */
export class ObserverLines implements Component {
  private cached: { width: number; lines: string[] } | undefined;
  constructor(private readonly draw: (width: number) => string[]) {}
  render(width: number): string[] {
    const columns = Math.max(1, width);
    if (this.cached?.width !== columns) this.cached = { width: columns, lines: this.draw(columns) };
    return [...this.cached.lines];
  }
  invalidate(): void {
    this.cached = undefined;
  }
}

const STATE_LOOK: Readonly<Record<RenderState, { readonly mark: string; readonly word: string; readonly color: ThemeColor }>> = {
  pending: { mark: "…", word: "pending", color: "muted" },
  running: { mark: "…", word: "running", color: "accent" },
  success: { mark: "✓", word: "success", color: "success" },
  warning: { mark: "!", word: "warning", color: "warning" },
  failure: { mark: "✗", word: "failure", color: "error" },
  cancelled: { mark: "⊘", word: "cancelled", color: "warning" },
};

/** One line of observer copy: controls gone, line breaks become spaces. */
function oneLine(clean: Clean, text: string): string {
  return clean(text.replace(/\r?\n/g, " "));
}

/** Lines that fit: collapsed rows are cut with an ellipsis, expanded ones wrap. */
function fit(line: string, width: number, wrap: boolean): string[] {
  return wrap ? wrapTextWithAnsi(line, width) : [truncateToWidth(line, width, "…")];
}

/** `MCP everything › echo  message="hi"` — server and original operation names, then the argument preview. */
export function toolCallComponent(model: RenderModel, theme: Theme, clean: Clean, options: RenderOptionsLike): Component {
  return new ObserverLines((width) => {
    const server = model.server === "" ? "all servers" : oneLine(clean, model.server);
    let header = `${theme.fg("toolTitle", theme.bold("MCP"))} ${theme.fg("accent", server)} ${theme.fg("muted", "›")} ${theme.fg("toolTitle", theme.bold(oneLine(clean, model.operation)))}`;
    const preview = oneLine(clean, model.argumentPreview);
    if (preview) header += `  ${theme.fg("muted", preview)}`;
    return fit(header, width, options.expanded === true);
  });
}

/** The state line (text-backed: a mark and a word), and when expanded the bounded sections. */
export function toolResultComponent(model: RenderModel, theme: Theme, clean: Clean, options: RenderOptionsLike): Component {
  return new ObserverLines((width) => {
    const look = STATE_LOOK[model.state];
    let line = theme.fg(look.color, `${look.mark} ${look.word}`);
    const summary = oneLine(clean, model.summary);
    if (summary) line += theme.fg("muted", ` · ${summary}`);
    const expandable = model.state !== "running" && model.state !== "pending";
    if (!options.expanded) {
      const hint = expandable ? expandHint(options) : undefined;
      return [truncateToWidth(hint ? `${line} ${theme.fg("dim", `(${hint})`)}` : line, width, "…")];
    }
    const lines = fit(line, width, true);
    for (const section of model.sections) {
      lines.push(...fit(theme.fg("muted", oneLine(clean, section.title)), width, true));
      const color = sectionColor(section.title, model.state);
      for (const text of section.lines) {
        for (const wrapped of wrapTextWithAnsi(theme.fg(color, clean(text)), Math.max(1, width - 2))) lines.push(`  ${wrapped}`);
      }
    }
    return lines;
  });
}

function sectionColor(title: string, state: RenderState): ThemeColor {
  if (title.startsWith("output schema")) return "warning";
  if (title.startsWith("error")) return state === "cancelled" ? "warning" : "error";
  if (title.startsWith("arguments") || title.startsWith("stored") || title.startsWith("result spill")) return "dim";
  return "toolOutput";
}

/** A custom message's own frame, like Pi's default one for custom messages. */
function messageBox(theme: Theme, outputPad: number, draw: (width: number) => string[]): Component {
  const box = new Box(outputPad, 1, (text) => theme.bg("customMessageBg", text));
  box.addChild(new ObserverLines(draw));
  return box;
}

/** The versioned record of a `pi-mcp.prompt` message (plugins/prompts), as far as the renderer reads it. */
interface PromptRecordLike {
  readonly version: 1;
  readonly server: string;
  readonly prompt: string;
  readonly arguments?: Readonly<Record<string, unknown>>;
  readonly description?: string;
  readonly messages: readonly { readonly role?: unknown; readonly text?: unknown; readonly images?: unknown }[];
  readonly spillPath?: string;
}

function promptRecord(details: unknown): PromptRecordLike | undefined {
  if (
    !isRecord(details) ||
    details.version !== 1 ||
    typeof details.server !== "string" ||
    typeof details.prompt !== "string" ||
    !Array.isArray(details.messages)
  )
    return undefined;
  return details as unknown as PromptRecordLike;
}

/**
 * A prompt the person ran: server, prompt name, message roles, text and image
 * metadata. Undefined for a record version this build does not know (Pi then
 * shows the message's content).
 */
export function promptMessageComponent(
  details: unknown,
  theme: Theme,
  clean: Clean,
  options: RenderOptionsLike & { readonly outputPad?: number },
): Component | undefined {
  const record = promptRecord(details);
  if (!record) return undefined;
  return messageBox(theme, options.outputPad ?? 1, (width) => {
    const args = Object.entries(record.arguments ?? {})
      .map(([key, value]) => `${key}="${String(value)}"`)
      .join(", ");
    const roles = record.messages.map((message) => (typeof message.role === "string" ? message.role : "user"));
    let header = `${theme.fg("customMessageLabel", theme.bold("MCP prompt"))} ${theme.fg("accent", oneLine(clean, record.server))} ${theme.fg("muted", "›")} ${theme.bold(oneLine(clean, record.prompt))}`;
    if (args) header += `  ${theme.fg("muted", oneLine(clean, args))}`;
    const lines = fit(header, width, options.expanded === true);
    const images = record.messages.reduce((sum, message) => sum + imagesOf(message.images).length, 0);
    const counts = [
      plural(roles.length, "message"),
      roles.length > 0 ? `roles ${[...new Set(roles)].map((role) => oneLine(clean, role)).join(", ")}` : "",
      images > 0 ? plural(images, "image") : "",
    ];
    lines.push(...fit(theme.fg("muted", counts.filter(Boolean).join(" · ")), width, options.expanded === true));
    if (!options.expanded) {
      const first = record.messages
        .map((message) => (typeof message.text === "string" ? message.text.trim().split("\n")[0] : ""))
        .find(Boolean);
      if (first) lines.push(truncateToWidth(theme.fg("customMessageText", oneLine(clean, first)), width, "…"));
      const hint = expandHint(options);
      if (hint) lines.push(theme.fg("dim", `(${hint})`));
      return lines;
    }
    if (record.description) lines.push(...fit(theme.fg("dim", oneLine(clean, record.description)), width, true));
    record.messages.forEach((message, index) => {
      lines.push(...fit(theme.fg("muted", `[${oneLine(clean, roles[index] ?? "user")}]`), width, true));
      const text = typeof message.text === "string" ? message.text : "";
      // Cleaned whole before it is cut, so no part of a secret survives the cut.
      if (text)
        for (const line of boundedLines(clean(text), LIMITS.outputLines, false))
          for (const wrapped of wrapTextWithAnsi(theme.fg("customMessageText", line), Math.max(1, width - 2))) lines.push(`  ${wrapped}`);
      for (const image of imagesOf(message.images))
        lines.push(...fit(`  ${theme.fg("dim", `image ${oneLine(clean, image.mimeType)}, ${formatBytes(image.bytes)}`)}`, width, true));
    });
    if (record.spillPath) lines.push(...fit(theme.fg("dim", `complete text: ${oneLine(clean, record.spillPath)}`), width, true));
    return lines;
  });
}

function imagesOf(value: unknown): { mimeType: string; bytes: number }[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isRecord).map((image) => ({
    mimeType: typeof image.mimeType === "string" ? image.mimeType : "(unknown type)",
    bytes: typeof image.bytes === "number" ? image.bytes : typeof image.data === "string" ? base64Bytes(image.data) : 0,
  }));
}

/**
 * A Resource Update Notice: the server and URI, and that the resource stays
 * unread until the agent reads it. Undefined for an unknown record version.
 */
export function resourceUpdateComponent(
  details: unknown,
  theme: Theme,
  clean: Clean,
  options: RenderOptionsLike & { readonly outputPad?: number },
): Component | undefined {
  if (!isRecord(details) || details.version !== 1 || typeof details.server !== "string" || typeof details.uri !== "string")
    return undefined;
  const { server, uri } = details;
  return messageBox(theme, options.outputPad ?? 1, (width) => [
    ...fit(
      `${theme.fg("customMessageLabel", theme.bold("MCP resource update"))} ${theme.fg("accent", oneLine(clean, server))} ${theme.fg("muted", "›")} ${oneLine(clean, uri)}`,
      width,
      true,
    ),
    ...fit(theme.fg("muted", "The resource changed. It stays unread until the agent reads it (read_mcp_resource)."), width, true),
  ]);
}
