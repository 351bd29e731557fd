import { readFile } from "node:fs/promises";
import { isRecord } from "../config/schema.ts";
import type { JsonFile } from "../config/files.ts";

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
    data = JSON.parse(lenient ? stripJsonc(text) : text);
  } catch {
    return { exists: true, problem: lenient ? "is not valid JSON (with comments)" : "is not valid JSON" };
  }
  if (!isRecord(data)) return { exists: true, problem: "must contain a JSON object" };
  return { exists: true, data };
}

/** Removes `//` and block comments, then commas before `}` or `]`, outside strings. */
export function stripJsonc(text: string): string {
  return dropTrailingCommas(dropComments(text));
}

function dropComments(text: string): string {
  let out = "";
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index]!;
    if (inString) {
      out += char;
      if (char === "\\") out += text[++index] ?? "";
      else if (char === '"') inString = false;
      continue;
    }
    if (char === '"') {
      inString = true;
      out += char;
    } else if (char === "/" && text[index + 1] === "/") {
      while (index < text.length && text[index] !== "\n") index++;
      out += "\n";
    } else if (char === "/" && text[index + 1] === "*") {
      const end = text.indexOf("*/", index + 2);
      index = end < 0 ? text.length : end + 1;
      out += " ";
    } else {
      out += char;
    }
  }
  return out;
}

function dropTrailingCommas(text: string): string {
  let out = "";
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index]!;
    if (inString) {
      out += char;
      if (char === "\\") out += text[++index] ?? "";
      else if (char === '"') inString = false;
      continue;
    }
    if (char === '"') inString = true;
    if (char === ",") {
      let next = index + 1;
      while (next < text.length && /\s/.test(text[next]!)) next++;
      if (text[next] === "}" || text[next] === "]") continue;
    }
    out += char;
  }
  return out;
}
