/** Plain-text layout shared by command output (status, help): lines that fit a terminal. */
import type { Surface } from "../kernel/commands.ts";

/** How wide a line of command output may be in an 80-column terminal: Pi pads its notices by one column on each side. */
export const SURFACE_WIDTH: Readonly<Record<Surface, number>> = { cli: 80, pi: 78 };

/**
 * Breaks one line at spaces so that no piece is longer than `width`;
 * continuation pieces start with `continuation`. A word longer than the room
 * is cut, unless `longWords` is `"keep"`: a URL or a path that is cut cannot be
 * copied, so there it stays whole, on a longer line.
 */
export function wrapLine(line: string, width: number, continuation: string, longWords: "cut" | "keep" = "cut"): string[] {
  const out: string[] = [];
  let rest = line;
  let prefix = "";
  while (prefix.length + rest.length > width) {
    const room = Math.max(20, width - prefix.length);
    if (rest.length <= room) break;
    const space = rest.lastIndexOf(" ", room);
    let cut = space > room / 3 ? space : room;
    if (cut === room && longWords === "keep") {
      // The word across the room's edge stays whole on this piece; the text after it continues below.
      cut = rest.indexOf(" ", room);
      if (cut < 0) break;
    }
    out.push(prefix + rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).trimStart();
    prefix = continuation;
  }
  out.push(prefix + rest);
  return out;
}

/**
 * Status text stays readable in an 80-column terminal (Pi's notices are
 * padded by one column on each side): a longer line breaks at a space, and
 * its continuation is indented two columns past the line's own indentation.
 */
export function wrapColumns(lines: readonly string[], width = 78): string[] {
  return lines.flatMap((line) => wrapLine(line, width, " ".repeat((/^ */.exec(line)?.[0].length ?? 0) + 2)));
}

/**
 * Rows of cells as aligned columns, two spaces apart. Only the columns before
 * the last are padded, so no line ends in spaces.
 */
export function alignColumns(rows: readonly (readonly string[])[]): string[] {
  const widths = (rows[0] ?? []).map((_, column) => Math.max(...rows.map((row) => row[column]?.length ?? 0)));
  return rows.map((row) =>
    row
      .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!)))
      .join("  ")
      .trimEnd(),
  );
}
