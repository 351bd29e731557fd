/*
 * JSON values a server sent (parsed already), made safe to keep and show:
 * walked without recursion, cut below a depth, and printed in a size that
 * grows with the value, never with its depth times its width.
 */
import { MAX_NESTING_DEPTH } from "../kernel/limits.ts";

type Container = Record<string, unknown> | unknown[];

const isContainer = (value: unknown): value is Container => typeof value === "object" && value !== null;

/** What stands for a value nested deeper than the cut. */
export const CUT_MARKER = `[nested more than ${MAX_NESTING_DEPTH} levels deep: cut]`;

export interface JsonShape {
  /** Containers (objects, arrays) nested in each other, at most: 0 for a scalar. */
  readonly depth: number;
  /** How many characters 2-space indentation adds to the compact JSON text. */
  readonly indentation: number;
}

/** The value's depth and the cost of indenting it, counted without recursion. */
export function jsonShape(value: unknown): JsonShape {
  let depth = 0;
  let indentation = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [current, level] = stack.pop()!;
    if (!isContainer(current)) continue;
    depth = Math.max(depth, level + 1);
    const children = Array.isArray(current) ? current : Object.values(current);
    if (children.length === 0) continue;
    // Each entry on a line of its own (newline + indent, and a space after an object key's colon), then the closing line.
    indentation += children.length * (1 + 2 * (level + 1) + (Array.isArray(current) ? 0 : 1)) + 1 + 2 * level;
    for (const child of children) if (isContainer(child)) stack.push([child, level + 1]);
  }
  return { depth, indentation };
}

/**
 * About how long the compact JSON text of `value` is (strings counted
 * without escapes), counted without recursion and without building it: what
 * a parsed value of a server's costs to keep.
 */
export function jsonLength(value: unknown): number {
  let length = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const current = stack.pop();
    if (typeof current === "string") length += current.length + 2;
    else if (isContainer(current)) {
      const keys = Array.isArray(current) ? undefined : Object.keys(current);
      const children = Array.isArray(current) ? current : Object.values(current);
      length += 2 + Math.max(0, children.length - 1); // brackets and commas
      for (const key of keys ?? []) length += key.length + 3; // "key":
      for (const child of children) stack.push(child);
    } else length += String(current).length;
  }
  return length;
}

/**
 * A copy of `value` whose containers nested deeper than `maxDepth` are
 * replaced by CUT_MARKER (the value itself when nothing is that deep).
 * Object keys are copied as own properties (a key `__proto__` stays a key).
 */
export function cutNesting(value: unknown, maxDepth = MAX_NESTING_DEPTH): { readonly value: unknown; readonly cut: boolean } {
  if (jsonShape(value).depth <= maxDepth) return { value, cut: false };
  const copyOf = (source: Container): Container => (Array.isArray(source) ? new Array<unknown>(source.length) : {});
  const root = copyOf(value as Container);
  const stack: [Container, Container, number][] = [[value as Container, root, 1]];
  while (stack.length > 0) {
    const [source, target, level] = stack.pop()!;
    for (const [key, child] of Object.entries(source)) {
      let copied: unknown = child;
      if (isContainer(child)) {
        if (level >= maxDepth) copied = CUT_MARKER;
        else {
          copied = copyOf(child);
          stack.push([child, copied as Container, level + 1]);
        }
      }
      if (Array.isArray(target)) target[Number(key)] = copied;
      else Object.defineProperty(target, key, { value: copied, enumerable: true, writable: true, configurable: true });
    }
  }
  return { value: root, cut: true };
}

/** Indented JSON up to this length is always fine (about Pi's 50 KB of model-facing text). */
const SMALL_JSON = 64 * 1024;

/**
 * The value as JSON text for the model: indented when that is small, or at
 * most doubles it; otherwise compact with a line break after each comma (the
 * model's text is cut by lines: one endless line would leave it nothing).
 * Deep and wide values indent to many times their size (1,000 levels of 300
 * keys: 2 MB compact, 306 MB indented), so the text stays within about twice
 * the compact JSON whatever the shape. The value must be cut first
 * (cutNesting): JSON.stringify recurses.
 */
export function printJson(value: unknown): string {
  const compact = JSON.stringify(value) ?? "null";
  const indented = compact.length + jsonShape(value).indentation;
  return indented <= Math.max(SMALL_JSON, 2 * compact.length) ? JSON.stringify(value, null, 2) : breakLines(compact);
}

/**
 * Calls `visit` with the code and index of every character of a JSON text
 * that stands outside its strings: the one scan of JSON text by its
 * structure, for texts too large or too deep to parse.
 */
export function forEachStructuralChar(json: string, visit: (code: number, index: number) => void): void {
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else visit(c, i);
  }
}

/** Compact JSON text with a line break after every comma between values (still the same JSON). */
function breakLines(json: string): string {
  const parts: string[] = [];
  let start = 0;
  forEachStructuralChar(json, (c, i) => {
    if (c !== 0x2c) return;
    parts.push(json.slice(start, i + 1));
    start = i + 1;
  });
  parts.push(json.slice(start));
  return parts.join("\n");
}
