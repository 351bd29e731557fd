import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import type { RegExpEngine, RegExpLike } from "ajv/dist/types/index.js";
import draft07 from "ajv/dist/refs/json-schema-draft-07.json" with { type: "json" };
import { RE2JS } from "re2js";

export type SchemaCheck = { ok: true } | { ok: false; message: string };

/**
 * Compiles each exact schema a server advertised once, on first use, and
 * caches the validator (or the compile error): a malformed schema fails only
 * the tool that carries it, and only when that tool is used.
 */
export class LazySchemas {
  /** Made at the first check: a host that starts (and a session whose tools are never called) pays nothing for it. */
  private engine: Ajv2020 | undefined;
  private readonly compiled = new WeakMap<object, ValidateFunction | Error>();

  private get ajv(): Ajv2020 {
    if (this.engine) return this.engine;
    // ownProperties: a property named `toString` or `constructor` is present only when the value has it (never inherited).
    // code.regExp: a server's `pattern` runs in linear time (RE2), never in V8's backtracking RegExp.
    this.engine = new Ajv2020({
      strict: false,
      allErrors: true,
      validateFormats: false,
      ownProperties: true,
      code: { regExp: linearRegExp },
    });
    // Many servers still declare draft-07 (zod-to-json-schema's default); the MCP default is 2020-12.
    this.engine.addMetaSchema(draft07);
    return this.engine;
  }

  check(schema: unknown, value: unknown, what: string): SchemaCheck {
    if (typeof schema !== "object" || schema === null) return { ok: false, message: `${what} schema is not a JSON object` };
    const validator = this.validator(schema);
    if (validator instanceof Error) return { ok: false, message: `${what} schema cannot be compiled: ${validator.message}` };
    let valid: boolean;
    try {
      valid = validator(value) as boolean;
    } catch (error) {
      // A recursive schema over data nested thousands of levels deep overflows the stack: the value is not checked, and the check says so.
      return {
        ok: false,
        message: `${what} could not be checked against its schema (${error instanceof Error ? error.message : String(error)})`,
      };
    }
    if (valid) return { ok: true };
    return { ok: false, message: `${what} does not match its schema: ${this.ajv.errorsText(validator.errors, { dataVar: what })}` };
  }

  private validator(schema: object): ValidateFunction | Error {
    let cached = this.compiled.get(schema);
    if (!cached) {
      try {
        cached = this.ajv.compile(schema);
      } catch (error) {
        cached = error instanceof Error ? error : new Error(String(error));
      }
      this.compiled.set(schema, cached);
    }
    return cached;
  }
}

/**
 * ajv's regular expressions (`pattern`, `patternProperties`) in RE2, which
 * matches in time linear in the input whatever the pattern: a pattern that
 * backtracks catastrophically in RegExp (`^(a+)+$`) cannot freeze Pi. A
 * pattern RE2 cannot run (a lookahead, a backreference) is not checked: it
 * matches anything, rather than run in a backtracking engine.
 */
const linearRegExp: RegExpEngine = Object.assign(
  (pattern: string): RegExpLike => {
    let test: (text: string) => boolean;
    try {
      const re2 = RE2JS.compile(RE2JS.translateRegExp(pattern));
      test = (text) => re2.test(text);
    } catch {
      test = () => true;
    }
    // ajv keys its compiled patterns by toString(): each must name its own.
    const compiled = { test, toString: () => pattern };
    return compiled;
  },
  { code: "linearRegExp" },
);

export { schemaForPi } from "./pi-schema.ts";
