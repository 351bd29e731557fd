// vitest globalSetup: the one place the tests build dist/. Pi runs pi-mcp's build (dist/pi/entry.mjs) when
// the package has one, and tests run the built program (dist/cli/index.mjs) and library, so a run after a
// change to the sources would test an older build: build first when the build is missing or older than any
// source it is made from.
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { buildDist, REPO_ROOT } from "../helpers/repo.ts";

const SOURCES = ["src", "plugins", "cli", "index.ts", "build.config.ts", "package.json"];
const BUILT_ENTRY = join(REPO_ROOT, "dist", "pi", "entry.mjs");

/** The newest modification time under `path` (a file or a folder), in ms. */
function newest(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newest(join(path, name))));
}

function builtAt(): number {
  try {
    return statSync(BUILT_ENTRY).mtimeMs;
  } catch {
    return -1;
  }
}

export default function buildWhenStale(): void {
  const sources = Math.max(...SOURCES.map((name) => newest(join(REPO_ROOT, name))));
  if (builtAt() < sources) buildDist();
}
