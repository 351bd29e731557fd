// scripts/import-graph.mjs run on small real trees: it finds every kind of
// import that closes a circle or breaks the layout's rules, and only those.
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { nodeBinary, REPO_ROOT } from "../helpers/tmp.ts";

const SCRIPT = join(REPO_ROOT, "scripts/import-graph.mjs");
const roots: string[] = [];

afterEach(async () => {
  await Promise.all(roots.splice(0).map((root) => rm(root, { recursive: true, force: true })));
});

/** Writes `files` (path → text) into a fresh folder and runs the checker on it. */
async function check(files: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const root = await mkdtemp(join(tmpdir(), "pi-mcp-import-graph-"));
  roots.push(root);
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
  const child = spawn(nodeBinary(), [SCRIPT, root], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  return { code, output };
}

/** A tree that keeps every rule: the base the other cases break one way each. */
const CLEAN: Record<string, string> = {
  "src/kernel/hooks.ts": `import { SyncHook } from "tapable";\nexport const hooks = { start: new SyncHook<[]>() };\n`,
  "src/kernel/types.ts": `import type { hooks } from "./hooks.ts";\nexport type Hooks = typeof hooks;\n`,
  "src/config/types.ts": `import type { Hooks } from "../kernel/types.ts";\nexport type Config = { hooks?: Hooks };\n`,
  "src/safety/text.ts": `export const clean = (text: string) => text;\n`,
  "src/runtime/host.ts": `import type { Hooks } from "../kernel/types.ts";\nimport { clean } from "../safety/text.ts";\nexport const host = (hooks: Hooks) => clean(String(hooks));\n`,
  "plugins/echo/helper.ts": `export const helper = 1;\n`,
  "plugins/echo/index.ts": [
    `import { hooks } from "../../src/kernel/hooks.ts";`,
    `import type { Config } from "../../src/kernel/settings.ts";`,
    `import { clean } from "../../src/safety/text.ts";`,
    `import { helper } from "./helper.ts";`,
    `import { join } from "node:path";`,
    `// import { host } from "../../src/runtime/host.ts";  (a comment is not an import)`,
    `const text = 'import "../../src/runtime/host.ts"';`,
    `export const echo = { hooks, helper, join, clean, text, config: undefined as Config | undefined };`,
    ``,
  ].join("\n"),
  "src/composition.ts": `import { echo } from "../plugins/echo/index.ts";\nexport const plugins = [echo];\n`,
  "src/index.ts": `export default async () => (await import("../plugins/echo/index.ts")).echo;\n`,
  "cli/main.ts": `import { plugins } from "../src/composition.ts";\nimport { echo } from "../plugins/echo/index.ts";\nexport const all = [plugins, echo];\n`,
};

describe("scripts/import-graph.mjs", () => {
  it("passes a tree with no circle and no broken rule (own-folder, kernel, config, safety and library imports are allowed)", async () => {
    const { code, output } = await check(CLEAN);
    expect(output).toContain("Import circles between files: 0");
    expect(output).toContain("Import circles between folders: 0");
    expect(output).toContain("Dependency-rule violations: 0");
    expect(code).toBe(0);
  });

  it.each([
    [
      "import type",
      `import type { B } from "./b.ts";\nexport type A = B;\n`,
      `import type { A } from "./a.ts";\nexport type B = { a?: A };\n`,
    ],
    ["a re-export", `export * from "./b.ts";\nexport const a = 1;\n`, `export { a } from "./a.ts";\n`],
    [
      "a type-only re-export and typeof import()",
      `export type { B } from "./b.ts";\n`,
      `export type A = typeof import("./a.ts");\nexport type B = A;\n`,
    ],
    ["a dynamic import", `export const load = () => import("./b.ts");\n`, `import { load } from "./a.ts";\nexport const b = load;\n`],
    [
      "an inline type import and a .js specifier",
      `import { type B } from "./b.js";\nexport type A = B;\n`,
      `import type { A } from "./a.ts";\nexport type B = A;\n`,
    ],
  ])("fails on a two-file circle closed by %s and names both files", async (_kind, a, b) => {
    const { code, output } = await check({ ...CLEAN, "src/runtime/a.ts": a, "src/runtime/b.ts": b });
    expect(output).toContain("Import circles between files: 1");
    expect(output).toMatch(/circle 1: 2 \(src\/runtime\/a\.ts, src\/runtime\/b\.ts\)/);
    expect(output).toMatch(/src\/runtime\/a\.ts:\d+ → src\/runtime\/b\.ts/);
    expect(output).toMatch(/src\/runtime\/b\.ts:\d+ → src\/runtime\/a\.ts/);
    expect(code).toBe(1);
  });

  it("shows every import inside a longer circle, including a file importing itself", async () => {
    const { code, output } = await check({
      ...CLEAN,
      "src/runtime/one.ts": `import "./two.ts";\nimport "./three.ts";\n`,
      "src/runtime/two.ts": `import "./three.ts";\n`,
      "src/runtime/three.ts": `import "./one.ts";\n`,
      "src/runtime/self.ts": `export type Self = typeof import("./self.ts");\n`,
    });
    expect(output).toContain("Import circles between files: 2");
    expect(output).toContain("3 (src/runtime/one.ts, src/runtime/three.ts, src/runtime/two.ts)");
    for (const step of [
      "one.ts:1 → src/runtime/two.ts",
      "one.ts:2 → src/runtime/three.ts",
      "two.ts:1 → src/runtime/three.ts",
      "three.ts:1 → src/runtime/one.ts",
    ]) {
      expect(output).toContain(`src/runtime/${step}`);
    }
    expect(output).toContain("src/runtime/self.ts:1 → src/runtime/self.ts (type)");
    expect(code).toBe(1);
  });

  it("fails on folders that import each other's leaves though no file circle exists", async () => {
    const { code, output } = await check({
      ...CLEAN,
      "src/import/run.ts": `import { mutate } from "../commands/mutate.ts";\nexport const run = mutate;\n`,
      "src/commands/mutate.ts": `export const mutate = 1;\n`,
      "src/commands/import.ts": `import { run } from "../import/run.ts";\nexport const command = run;\n`,
    });
    expect(output).toContain("Import circles between files: 0");
    expect(output).toContain("Import circles between folders: 1");
    expect(output).toContain("src/commands/ → src/import/  [src/commands/import.ts:1 → src/import/run.ts]");
    expect(output).toContain("src/import/ → src/commands/  [src/import/run.ts:1 → src/commands/mutate.ts]");
    expect(code).toBe(1);
  });

  it("fails on each dependency-rule violation and names the import (type-only ones too)", async () => {
    const { code, output } = await check({
      ...CLEAN,
      "src/kernel/types.ts": `import type { hooks } from "./hooks.ts";\nimport type { host } from "../runtime/host.ts";\nexport type Hooks = typeof hooks | typeof host;\n`,
      "plugins/echo/index.ts": `import type { host } from "../../src/runtime/host.ts";\nimport { other } from "../other/index.ts";\nexport const echo = [other] as unknown as typeof host;\n`,
      "plugins/other/index.ts": `export const other = 1;\n`,
      "src/runtime/host.ts": `export const host = async () => (await import("../../plugins/echo/index.ts")).echo;\n`,
    });
    expect(output).toMatch(/the kernel imports only the kernel \(1\):\n {4}src\/kernel\/types\.ts:2 → src\/runtime\/host\.ts \(type\)/);
    expect(output).toMatch(/a plugin imports only its own folder, src\/kernel, src\/config, src\/safety and libraries \(2\):/);
    expect(output).toContain("plugins/echo/index.ts:1 → src/runtime/host.ts (type)");
    expect(output).toContain("plugins/echo/index.ts:2 → plugins/other/index.ts");
    expect(output).toMatch(/src\/ imports no plugin [^\n]*\(1\):\n {4}src\/runtime\/host\.ts:1 → plugins\/echo\/index\.ts \(dynamic\)/);
    expect(output).toContain("Dependency-rule violations: 4");
    expect(code).toBe(1);
  });
});
