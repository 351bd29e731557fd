import { readFile } from "node:fs/promises";
import type { JsonFile } from "../config/files.ts";
import { parseJson, isRecord } from "../safety/keys.ts";

/**
 * Reads a host's configuration file. `lenient` accepts JSON with comments and
 * trailing commas, as VS Code and Cursor write them; Pi and Claude Code parse
 * plain JSON, so their files are read strictly (a file they cannot parse
 * defines nothing). Problems say where, never what the file holds.
 */
export async function readSourceFile(path: string, lenient: boolean): Promise<JsonFile> {
  let text: string;
  try {
    text = (await readFile(path, "utf8")).replace(/^\uFEFF/, "");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { exists: false };
    return { exists: true, problem: `cannot be read (${code ?? "error"})` };
  }
  let data: unknown;
  try {
    data = parseJson(lenient ? stripJsonc(text) : text);
  } catch {
    return { exists: true, problem: lenient ? "is not valid JSON (with comments)" : "is not valid JSON" };
  }
  if (!isRecord(data)) return { exists: true, problem: "must contain a JSON object" };
  return { exists: true, data };
}

/** Removes `//` and block comments, then commas before `}` or `]`, outside strings. */
function stripJsonc(text: string): string {
  return dropTrailingCommas(dropComments(text));
}

/**
 * Copies `text`, strings (with their escapes) as they are; everywhere else
 * `outside(index)` says what to write for the text at `index` and where to go on.
 */
function rewriteOutsideStrings(text: string, outside: (index: number) => { readonly emit: string; readonly next: number }): string {
  let out = "";
  let inString = false;
  for (let index = 0; index < text.length; ) {
    const char = text[index]!;
    if (inString || char === '"') {
      if (inString && char === "\\") {
        out += text.slice(index, index + 2);
        index += 2;
        continue;
      }
      inString = char === '"' ? !inString : inString;
      out += char;
      index++;
      continue;
    }
    const step = outside(index);
    out += step.emit;
    index = step.next;
  }
  return out;
}

function dropComments(text: string): string {
  return rewriteOutsideStrings(text, (index) => {
    if (text.startsWith("//", index)) {
      const end = text.indexOf("\n", index);
      return { emit: "\n", next: end < 0 ? text.length : end + 1 };
    }
    if (text.startsWith("/*", index)) {
      const end = text.indexOf("*/", index + 2);
      return { emit: " ", next: end < 0 ? text.length : end + 2 };
    }
    return { emit: text[index]!, next: index + 1 };
  });
}

function dropTrailingCommas(text: string): string {
  return rewriteOutsideStrings(text, (index) => {
    if (text[index] !== ",") return { emit: text[index]!, next: index + 1 };
    let next = index + 1;
    while (next < text.length && /\s/.test(text[next]!)) next++;
    return { emit: text[next] === "}" || text[next] === "]" ? "" : ",", next: index + 1 };
  });
}
