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
  // ownProperties: a property named `toString` or `constructor` is present only when the value has it (never inherited).
  // code.regExp: a server's `pattern` runs in linear time (RE2), never in V8's backtracking RegExp.
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false, ownProperties: true, code: { regExp: linearRegExp } });
  private readonly compiled = new WeakMap<object, ValidateFunction | Error>();

  constructor() {
    // Many servers still declare draft-07 (zod-to-json-schema's default); the MCP default is 2020-12.
    this.ajv.addMetaSchema(draft07);
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
      return { ok: false, message: `${what} could not be checked against its schema (${error instanceof Error ? error.message : String(error)})` };
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

/** Keywords whose value is one subschema, a list of them, or a map of them (JSON Schema 2020-12 and draft-07). */
const ONE_SCHEMA = ["additionalProperties", "additionalItems", "items", "contains", "not", "if", "then", "else", "propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema"];
const SCHEMA_LIST = ["allOf", "anyOf", "oneOf", "prefixItems", "items"];
const SCHEMA_MAP = ["properties", "$defs", "definitions", "dependentSchemas", "dependencies"];

/**
 * The input schema as Pi gets it for its own argument check: without any
 * `pattern` or `patternProperties` (and the `additionalProperties` /
 * `unevaluatedProperties` beside them, which would then refuse what the
 * patterns allowed). Pi's validator runs patterns with V8's backtracking
 * RegExp, where one hostile pattern blocks the process for minutes; pi-mcp
 * checks the full schema itself, in linear time, before every call. Returns
 * `schema` itself when it holds no pattern, otherwise a copy (the server's
 * schema is never changed).
 */
export function schemaForPi<T>(schema: T): T {
  if (Array.isArray(schema)) {
    let copy: unknown[] | undefined;
    schema.forEach((item, index) => {
      const mapped = schemaForPi(item);
      if (mapped !== item) (copy ??= [...schema])[index] = mapped;
    });
    return (copy ?? schema) as T;
  }
  if (typeof schema !== "object" || schema === null) return schema;
  const source = schema as Record<string, unknown>;
  let copy: Record<string, unknown> | undefined;
  const change = (key: string, value: unknown) => {
    copy ??= { ...source };
    if (value === undefined) delete copy[key];
    else copy[key] = value;
  };
  if (typeof source.pattern === "string") change("pattern", undefined);
  if (Object.hasOwn(source, "patternProperties")) {
    change("patternProperties", undefined);
    for (const key of ["additionalProperties", "unevaluatedProperties"]) if (Object.hasOwn(source, key) && source[key] !== true) change(key, undefined);
  }
  for (const key of new Set([...ONE_SCHEMA, ...SCHEMA_LIST])) {
    if (!Object.hasOwn(source, key) || (copy && !Object.hasOwn(copy, key))) continue;
    const mapped = schemaForPi(source[key]);
    if (mapped !== source[key]) change(key, mapped);
  }
  for (const key of SCHEMA_MAP) {
    const map = source[key];
    if (!Object.hasOwn(source, key) || typeof map !== "object" || map === null || Array.isArray(map)) continue;
    const entries = Object.entries(map);
    const mapped = entries.map(([name, subschema]) => [name, schemaForPi(subschema)] as const);
    // fromEntries defines each name as an own property: a property named `__proto__` stays a property.
    if (mapped.some(([, subschema], index) => subschema !== entries[index]![1])) change(key, Object.fromEntries(mapped));
  }
  return (copy ?? schema) as T;
}
