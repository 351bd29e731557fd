/**
 * The README's TypeScript examples compile, as the MCP SDK keeps the snippets
 * its docs show in files its compiler checks: each ```ts block of the README
 * is, character for character, a file of test/package/readme-examples/
 * (in order), and those files are type-checked with the project
 * (`npm run typecheck`, part of `npm test` and CI), `pi-mcp` resolving to the
 * public library entry (tsconfig.json `paths`: src/lib.ts). An example can
 * therefore not drift from the API it shows: change the README and this test
 * asks for the same change in the file, which tsc then checks. A block that
 * is not meant to compile is fenced with another language.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { REPO_ROOT } from "../helpers/tmp.ts";

const EXAMPLES = join(REPO_ROOT, "test/package/readme-examples");

/** Each ```ts block of `markdown`, in order. */
function typeScriptBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```(?:ts|typescript)\n([\s\S]*?)^```$/gm)].map((match) => match[1]!);
}

it("every TypeScript example of the README is a file the project's type check compiles", () => {
  const blocks = typeScriptBlocks(readFileSync(join(REPO_ROOT, "README.md"), "utf8"));
  const files = readdirSync(EXAMPLES)
    .filter((name) => name.endsWith(".ts"))
    .sort((a, b) => Number.parseInt(a, 10) - Number.parseInt(b, 10));
  expect(blocks.length).toBeGreaterThan(0);
  expect(files.map((name) => readFileSync(join(EXAMPLES, name), "utf8"))).toEqual(blocks);
  const tsconfig = readFileSync(join(REPO_ROOT, "tsconfig.json"), "utf8");
  expect(tsconfig).toContain('"pi-mcp": ["./src/lib.ts"]');
  expect(tsconfig).toMatch(/"include": \[[^\]]*"test"/);
});
