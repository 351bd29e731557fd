/**
 * The value conversions under every import: each host's variable forms, Pi's
 * `!command` / `$NAME` / escapes, and Pi's tool patterns as picomatch globs
 * (checked against Pi's own matching on every short name and pattern).
 */
import picomatch from "picomatch";
import { describe, expect, it } from "vitest";
import { escapeGlob, patternToGlob } from "../../src/import/pi.ts";
import { CLAUDE } from "../../src/import/claude.ts";
import { CURSOR } from "../../src/import/cursor.ts";
import { GENERIC } from "../../src/import/generic.ts";
import { VSCODE } from "../../src/import/vscode.ts";
import { convertPiLiteral, convertPiPath, convertPiValue, convertTemplate } from "../../src/import/values.ts";

const ok = (value: string) => ({ ok: true, value });

describe("Pi values (env, headers, oauth.clientSecret)", () => {
  it("keeps ${NAME}, turns $NAME into ${NAME}, and resolves the $$ and $! escapes", () => {
    expect(convertPiValue("Bearer ${DOCS_TOKEN}")).toEqual(ok("Bearer ${DOCS_TOKEN}"));
    expect(convertPiValue("$LOG_LEVEL")).toEqual(ok("${LOG_LEVEL}"));
    expect(convertPiValue("a-$HOME_DIR/b")).toEqual(ok("a-${HOME_DIR}/b"));
    expect(convertPiValue("$$5 $!")).toEqual(ok("$5 !"));
    expect(convertPiValue("plain")).toEqual(ok("plain"));
    expect(convertPiValue("${not valid}")).toEqual(ok("${not valid}"));
    expect(convertPiValue("cost: $ 5")).toEqual(ok("cost: $ 5"));
    expect(convertPiValue("${UNCLOSED")).toEqual(ok("${UNCLOSED"));
  });

  it("refuses !command values and escapes that pi-mcp would read as a reference, without quoting them", () => {
    const command = convertPiValue("!gh auth token --secret-flag");
    expect(command.ok).toBe(false);
    expect(JSON.stringify(command)).not.toContain("gh auth");
    expect(convertPiValue("$${LITERAL}")).toMatchObject({
      ok: false,
      reason: expect.stringContaining("would read as a ${NAME} reference"),
    });
  });

  it("takes other fields literally, so a ${NAME} there cannot be imported; ~ becomes ${HOME}", () => {
    expect(convertPiLiteral("https://example.com/mcp")).toEqual(ok("https://example.com/mcp"));
    expect(convertPiLiteral("${X}").ok).toBe(false);
    expect(convertPiPath("~")).toEqual(ok("${HOME}"));
    expect(convertPiPath("~/notes")).toEqual(ok("${HOME}/notes"));
    expect(convertPiPath("~user/x")).toEqual(ok("~user/x"));
  });
});

describe("host variable forms", () => {
  it("keeps ${NAME} and converts ${env:NAME} where the host has it", () => {
    for (const profile of [CURSOR, VSCODE, GENERIC]) {
      expect(convertTemplate("${env:TOKEN}/x/${OTHER}", profile.variables)).toEqual(ok("${TOKEN}/x/${OTHER}"));
    }
    expect(convertTemplate("${TOKEN}", CLAUDE.variables)).toEqual(ok("${TOKEN}"));
    expect(convertTemplate("${env:TOKEN}", CLAUDE.variables).ok).toBe(false);
  });

  it("refuses inputs, defaults and the hosts' own variables, naming the form but never a value", () => {
    const input = convertTemplate("Bearer ${input:api-key}", VSCODE.variables);
    expect(input).toMatchObject({ ok: false, reason: expect.stringContaining("${input:…}") });
    const fallback = convertTemplate("${TOKEN:-sk-fallback-secret}", CLAUDE.variables);
    expect(fallback).toMatchObject({ ok: false, reason: expect.stringContaining("${NAME:-…}") });
    expect(JSON.stringify(fallback)).not.toContain("sk-fallback-secret");
    expect(convertTemplate("${workspaceFolder}/a", VSCODE.variables)).toMatchObject({
      ok: false,
      reason: expect.stringContaining("${workspaceFolder}"),
    });
    expect(convertTemplate("${userHome}/a", CURSOR.variables).ok).toBe(false);
    expect(convertTemplate("${CLAUDE_PROJECT_DIR}/a", CLAUDE.variables).ok).toBe(false);
    expect(convertTemplate("${config:some.setting}", VSCODE.variables)).toMatchObject({
      ok: false,
      reason: expect.stringContaining("${config:…}"),
    });
    expect(convertTemplate("${/}", CURSOR.variables).ok).toBe(false);
  });
});

describe("Pi tool patterns as picomatch globs", () => {
  /** Pi's matching: `*` is any run of characters, everything else literal. */
  const piMatches = (pattern: string, name: string) =>
    new RegExp(
      `^${pattern
        .split("*")
        .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
        .join(".*")}$`,
    ).test(name);

  function* words(alphabet: readonly string[], max: number): Generator<string> {
    let current = [""];
    for (let length = 1; length <= max; length++) {
      current = current.flatMap((prefix) => alphabet.map((char) => prefix + char));
      yield* current;
    }
  }

  it("match exactly the tool names Pi's patterns match (names with '/', '.', '-' and '_')", () => {
    // Tool names are letters, digits, '_', '-', '.' and '/' (MCP's tool-name format); '/' separates segments.
    const names = [...words(["a", "b", "/", ".", "-"], 4)].filter((name) =>
      name.split("/").every((segment) => segment !== "" && segment !== "." && segment !== ".."),
    );
    const patterns = [...words(["a", "/", ".", "*"], 4)];
    const differences: string[] = [];
    for (const pattern of patterns) {
      const glob = pattern.includes("*") ? patternToGlob(pattern) : escapeGlob(pattern);
      const matcher = picomatch([glob], { dot: true });
      for (const name of names) if (matcher(name) !== piMatches(pattern, name)) differences.push(`${pattern} vs ${name}`);
    }
    expect(names.length * patterns.length).toBeGreaterThan(50_000);
    expect(differences).toEqual([]);
  });

  it("escape every special character of an exact tool name", () => {
    for (const name of ["a(b)", "x[1]", "{y}", "!neg", "q?", "plus+", "at@", "a|b", "a/b.c"]) {
      expect(picomatch([escapeGlob(name)], { dot: true })(name)).toBe(true);
    }
    expect(picomatch([escapeGlob("a?")], { dot: true })("ab")).toBe(false);
  });
});
