/**
 * Files of the pi-mcp package itself (its manifest, the settings schema's
 * source), found from wherever the running copy of this module sits: the
 * sources (`src/config/`) or a built chunk (`dist/shared/`, `dist/chunks/`,
 * at other depths). Both copies must read the same files, since what one of
 * them records (a settings check, a catalog) the other one trusts.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ancestors } from "./paths.ts";

const PACKAGE_NAME = "pi-mcp";

let root: string | undefined | null = null;

/** The package's folder: the nearest one above this module whose package.json names pi-mcp (undefined when none does). */
export function packageRoot(): string | undefined {
  if (root !== null) return root;
  root = ancestors(dirname(fileURLToPath(import.meta.url))).find((folder) => {
    try {
      return (JSON.parse(readFileSync(join(folder, "package.json"), "utf8")) as { name?: unknown }).name === PACKAGE_NAME;
    } catch {
      return false;
    }
  });
  return root;
}

/** The text of a file of the package (a path relative to its folder); throws when it cannot be read. */
export function readPackageFile(relative: string): string {
  const folder = packageRoot();
  if (folder === undefined) throw new Error(`no ${PACKAGE_NAME} package.json above ${fileURLToPath(import.meta.url)}`);
  return readFileSync(join(folder, relative), "utf8");
}
