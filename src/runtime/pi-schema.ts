// A leaf (no validator loaded): the Pi entry registers tools from known catalogs with it while Pi loads the extension.

/** Keywords whose value is one subschema, a list of them, or a map of them (JSON Schema 2020-12 and draft-07). */
const ONE_SCHEMA = [
  "additionalProperties",
  "additionalItems",
  "items",
  "contains",
  "not",
  "if",
  "then",
  "else",
  "propertyNames",
  "unevaluatedItems",
  "unevaluatedProperties",
  "contentSchema",
];
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
      if (mapped === item) return;
      copy ??= [...schema];
      copy[index] = mapped;
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
    for (const key of ["additionalProperties", "unevaluatedProperties"])
      if (Object.hasOwn(source, key) && source[key] !== true) change(key, undefined);
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
