/**
 * The checkout the tests run from, and its build. Free of vitest's runtime,
 * so the global setup (test/setup/built-core.ts) can use it as well as tests.
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** PATH with the project's binaries (Node 22, unbuild) first. */
export function projectPath(): string {
  return `${join(REPO_ROOT, "node_modules/.bin")}:${process.env.PATH ?? ""}`;
}

/** Builds dist/ (the program, the library, the Pi extension); a build that fails throws with the build's own words. */
export function buildDist(): void {
  try {
    execFileSync("unbuild", [], { cwd: REPO_ROOT, env: { ...process.env, PATH: projectPath() }, stdio: "pipe", timeout: 300_000 });
  } catch (error) {
    const output = error instanceof Error && "stderr" in error ? String(error.stderr).slice(-4_000) : "";
    throw new Error(`building dist/ failed: ${String(error)}\n${output}`);
  }
}
