/*
 * The MCP Transcript Presentation as data: what one tool row says, built only
 * from the persisted (or partial) result Pi already holds. Nothing here talks
 * to a server, reads a resource, or touches what the model sees. Strings stay
 * raw: the drawing side (components.ts) makes every one of them safe.
 */
import { base64Bytes } from "../../src/kernel/protocol.ts";
import { isRecord } from "../../src/safety/keys.ts";
import { RESOURCE_TOOLS } from "../../src/kernel/pi-part.ts";
import type { RenderContext, RenderModel, RenderResult, RenderSection, RenderState } from "../../src/kernel/types.ts";
import { safeText } from "../../src/safety/text.ts";
import { keyedRecord } from "../../src/safety/keys.ts";

/** Observer copy of one string: applied before anything is cut, so no part of a secret survives a cut. */
type Clean = (text: string) => string;

/** Bounds of the expanded view, so a huge result cannot flood the terminal. */
export const LIMITS = Object.freeze({
  /** Lines of pretty-printed arguments. */
  argumentLines: 40,
  /** Characters of one string value in arguments and structured data. */
  stringChars: 200,
  /** Items of one array, or keys of one object, in arguments. */
  collectionItems: 50,
  /** Nesting shown in arguments; deeper values are summarised. */
  depth: 8,
  /** Lines of model-visible text. */
  outputLines: 200,
  /** Characters of one line of model-visible text. */
  lineChars: 2_000,
  /** Characters of one value in the one-line argument preview. */
  previewValueChars: 60,
  /** Characters of the whole argument preview (the row cuts it to the terminal width too). */
  previewChars: 400,
});

/** Pi's fixed resource tools and the MCP methods they run. */
export const FIXED_TOOL_OPERATIONS: Readonly<Record<string, string>> = Object.freeze({
  [RESOURCE_TOOLS.list]: "resources/list",
  [RESOURCE_TOOLS.templates]: "resources/templates/list",
  [RESOURCE_TOOLS.read]: "resources/read",
});

export function blankModel(context: RenderContext): RenderModel {
  return { server: context.server, operation: context.operation, argumentPreview: "", state: "pending", summary: "", sections: [] };
}

/** The built-in row: fills every field from the context (taps after it refine). */
export function buildRow(model: RenderModel, context: RenderContext): RenderModel {
  const clean: Clean = (text) => safeText(text, context.redact);
  const result = context.result;
  model.argumentPreview = argumentPreview(context.args, clean);
  model.state = rowState(context);
  if (!result) return model;
  const text = clean(textOf(result));
  model.summary = summaryOf(model.state, result, text);
  if (context.expanded)
    model.sections = sectionsOf(model.state, result, boundedJsonLines(context.args ?? {}, LIMITS.argumentLines, clean), text);
  return model;
}

/** A thrown cancellation (ours, or Pi's own before the call ran) is cancelled, not failed. */
const CANCELLED = /(?:^Operation aborted$|\bwas cancelled$)/;

export function rowState(context: Pick<RenderContext, "result" | "partial">): RenderState {
  const result = context.result;
  if (!result) return "pending";
  if (context.partial) return "running";
  if (result.isError) return CANCELLED.test(textOf(result).trim()) ? "cancelled" : "failure";
  if (typeof result.details.outputSchemaError === "string") return "warning";
  return "success";
}

/** The model-visible text of a result, its text items joined. */
export function textOf(result: RenderResult): string {
  return result.content.flatMap((item) => (item.type === "text" && typeof item.text === "string" ? [item.text] : [])).join("\n");
}

/** `name="value", count=3, items=[2 items], options={3 keys}` */
export function argumentPreview(args: Readonly<Record<string, unknown>> | undefined, clean: Clean): string {
  if (!isRecord(args)) return "";
  const preview = Object.entries(args)
    .map(([key, value]) => `${clean(key)}=${previewValue(value, clean)}`)
    .join(", ");
  return preview.length > LIMITS.previewChars ? `${preview.slice(0, LIMITS.previewChars)}…` : preview;
}

function previewValue(value: unknown, clean: Clean): string {
  if (typeof value === "string") {
    // Quoted, not JSON-escaped: escapes would hide a secret from exact-value redaction.
    const text = clean(value).replace(/\r?\n/g, " ");
    return `"${text.length > LIMITS.previewValueChars ? `${text.slice(0, LIMITS.previewValueChars)}…` : text}"`;
  }
  if (Array.isArray(value)) return `[${plural(value.length, "item")}]`;
  if (isRecord(value)) return `{${plural(Object.keys(value).length, "key")}}`;
  return String(value);
}

function summaryOf(state: RenderState, result: RenderResult, text: string): string {
  if (state === "running") return progressOf(result.details.progress) ?? "started";
  if (state === "failure" || state === "cancelled")
    return firstLine(text) || (state === "cancelled" ? "stopped before it finished" : "the call failed");
  const parts = [countsOf(result)];
  if (state === "warning") parts.unshift("output-schema failure");
  if (typeof result.details.spillPath === "string") parts.push("truncated, complete output saved");
  return parts.filter(Boolean).join(" · ");
}

function progressOf(value: unknown): string | undefined {
  if (!isRecord(value) || typeof value.progress !== "number") return undefined;
  const total = typeof value.total === "number" && value.total > 0 ? value.total : undefined;
  const amount = total === undefined ? `${value.progress}` : `${value.progress}/${total} (${Math.round((value.progress / total) * 100)}%)`;
  return `progress ${amount}${typeof value.message === "string" && value.message ? `: ${value.message}` : ""}`;
}

/** `2 text, 1 image, structured content` — or, for the listing tools, what was listed. */
function countsOf(result: RenderResult): string {
  const listed = listedCounts(result.details);
  if (listed) return listed;
  const byType = new Map<string, number>();
  for (const item of result.content) {
    const type = typeof item.type === "string" ? item.type : "unknown";
    byType.set(type, (byType.get(type) ?? 0) + 1);
  }
  const parts = [...byType].map(([type, count]) => (type === "text" ? `${count} text` : plural(count, type)));
  if (result.details.structuredContent !== undefined) parts.push("structured content");
  if (parts.length === 0) parts.push("no content");
  return parts.join(", ");
}

/** The listing tools keep what they listed per server in details. */
function listedCounts(details: Readonly<Record<string, unknown>>): string | undefined {
  for (const [key, noun] of [
    ["resources", "resource"],
    ["resourceTemplates", "template"],
  ] as const) {
    const found = details[key];
    if (!isRecord(found)) continue;
    const servers = Object.keys(found);
    const count = servers.reduce((sum, server) => sum + (Array.isArray(found[server]) ? (found[server] as unknown[]).length : 0), 0);
    return `${plural(count, noun)} from ${plural(servers.length, "server")}`;
  }
  return undefined;
}

function sectionsOf(state: RenderState, result: RenderResult, args: string[], text: string): RenderSection[] {
  const sections: RenderSection[] = [];
  sections.push({ title: "arguments", lines: args });
  if (text !== "") {
    const title =
      state === "running" ? "progress" : state === "failure" || state === "cancelled" ? "error (model-visible)" : "output (model-visible)";
    sections.push({ title, lines: boundedLines(text, LIMITS.outputLines, typeof result.details.spillPath === "string") });
  }
  const stored = storedContent(result, text);
  if (stored.length > 0) sections.push({ title: "stored content", lines: stored });
  if (typeof result.details.outputSchemaError === "string") {
    sections.push({ title: "output schema failure", lines: result.details.outputSchemaError.split("\n") });
  }
  if (typeof result.details.spillPath === "string") {
    sections.push({ title: "result spill (complete output)", lines: [result.details.spillPath] });
  }
  return sections;
}

/** Images (drawn by Pi itself), structured content, files saved privately, listed items. */
function storedContent(result: RenderResult, text: string): string[] {
  const lines: string[] = [];
  for (const item of result.content) {
    if (item.type !== "image") continue;
    const bytes = typeof item.data === "string" ? base64Bytes(item.data) : 0;
    lines.push(`image ${typeof item.mimeType === "string" ? item.mimeType : "(unknown type)"}, ${formatBytes(bytes)}`);
  }
  const structured = result.details.structuredContent;
  if (structured !== undefined)
    lines.push(
      `structured content: ${shapeOf(structured)}, ${formatBytes(Buffer.byteLength(JSON.stringify(structured) ?? "", "utf8"))} (kept in the result details)`,
    );
  for (const match of text.matchAll(/\bsaved to (\S+?)\]/g)) lines.push(`saved file: ${match[1]}`);
  for (const key of ["resources", "resourceTemplates"] as const) {
    const found = result.details[key];
    if (!isRecord(found)) continue;
    for (const server of Object.keys(found).sort()) {
      const items = Array.isArray(found[server]) ? (found[server] as unknown[]).length : 0;
      lines.push(`${server}: ${plural(items, key === "resources" ? "resource" : "template")}`);
    }
  }
  return lines;
}

/**
 * Pretty JSON with long strings, big collections and deep nesting summarised,
 * at most `maxLines` lines. Strings are observer copy before they are cut and
 * quoted (a secret inside one is still redacted after JSON escaping).
 */
export function boundedJsonLines(value: unknown, maxLines: number, clean: Clean): string[] {
  const text = JSON.stringify(bound(value, 0, clean), null, 2) ?? String(value);
  return boundedLines(text, maxLines, false);
}

function bound(value: unknown, depth: number, clean: Clean): unknown {
  if (typeof value === "string") {
    const text = clean(value);
    return text.length > LIMITS.stringChars ? `${text.slice(0, LIMITS.stringChars)}… (${text.length} characters)` : text;
  }
  if (Array.isArray(value)) {
    if (depth >= LIMITS.depth) return `[${plural(value.length, "item")}]`;
    const items = value.slice(0, LIMITS.collectionItems).map((item) => bound(item, depth + 1, clean));
    if (value.length > LIMITS.collectionItems) items.push(`… ${value.length - LIMITS.collectionItems} more items`);
    return items;
  }
  if (isRecord(value)) {
    const keys = Object.keys(value);
    if (depth >= LIMITS.depth) return `{${plural(keys.length, "key")}}`;
    const out = keyedRecord<unknown>();
    for (const key of keys.slice(0, LIMITS.collectionItems)) out[clean(key)] = bound(value[key], depth + 1, clean);
    if (keys.length > LIMITS.collectionItems) out["…"] = `${keys.length - LIMITS.collectionItems} more keys`;
    return out;
  }
  return value;
}

/** At most `maxLines` lines of at most LIMITS.lineChars characters, with a note of what was left out. */
export function boundedLines(text: string, maxLines: number, spilled: boolean): string[] {
  const all = text.split("\n");
  const lines = all.slice(0, maxLines).map((line) => (line.length > LIMITS.lineChars ? `${line.slice(0, LIMITS.lineChars)}…` : line));
  if (all.length > maxLines)
    lines.push(`… ${all.length - maxLines} more lines${spilled ? " (the complete output is in the result spill file)" : ""}`);
  return lines;
}

function shapeOf(value: unknown): string {
  if (Array.isArray(value)) return `array of ${plural(value.length, "item")}`;
  if (isRecord(value)) return `object with ${plural(Object.keys(value).length, "key")}`;
  return value === null ? "null" : typeof value;
}

function firstLine(text: string): string {
  const line = text.trim().split("\n")[0] ?? "";
  return line.length > LIMITS.stringChars ? `${line.slice(0, LIMITS.stringChars)}…` : line;
}

export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
