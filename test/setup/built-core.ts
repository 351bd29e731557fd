// vitest globalSetup. Pi runs pi-mcp's build (dist/pi/entry.mjs) when the package has one, so a
// test that runs a real Pi would run an older build after a change to the sources: build first when
// the build is missing or older than any source it is made from.
import { execFileSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";

const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

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
  if (builtAt() >= sources) return;
  try {
    execFileSync("unbuild", [], {
      cwd: REPO_ROOT,
      env: { ...process.env, PATH: `${join(REPO_ROOT, "node_modules", ".bin")}${delimiter}${process.env.PATH ?? ""}` },
      stdio: "pipe",
      timeout: 300_000,
    });
  } catch (error) {
    // The build's own words: a source that does not build fails the run here, saying why.
    const output = error instanceof Error && "stderr" in error ? String(error.stderr).slice(-4_000) : "";
    throw new Error(`building the extension for the tests failed: ${String(error)}\n${output}`);
  }
}
