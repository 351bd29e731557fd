import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import draft07 from "ajv/dist/refs/json-schema-draft-07.json" with { type: "json" };

export type SchemaCheck = { ok: true } | { ok: false; message: string };

/**
 * Compiles each exact schema a server advertised once, on first use, and
 * caches the validator (or the compile error): a malformed schema fails only
 * the tool that carries it, and only when that tool is used.
 */
export class LazySchemas {
  // ownProperties: a property named `toString` or `constructor` is present only when the value has it (never inherited).
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false, ownProperties: true });
  private readonly compiled = new WeakMap<object, ValidateFunction | Error>();

  constructor() {
    // Many servers still declare draft-07 (zod-to-json-schema's default); the MCP default is 2020-12.
    this.ajv.addMetaSchema(draft07);
  }

  check(schema: unknown, value: unknown, what: string): SchemaCheck {
    if (typeof schema !== "object" || schema === null) return { ok: false, message: `${what} schema is not a JSON object` };
    const validator = this.validator(schema);
    if (validator instanceof Error) return { ok: false, message: `${what} schema cannot be compiled: ${validator.message}` };
    if (validator(value)) return { ok: true };
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
