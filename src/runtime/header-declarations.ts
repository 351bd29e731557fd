/*
 * 2026-07-28 servers may mark input properties with `x-mcp-header`, asking the
 * client to mirror the argument into an HTTP header. A tool whose markings
 * break the specification's rules must not be offered. The SDK checks this
 * only on its own list path (which we cannot use: it caps pages and accepts a
 * repeated cursor), and does not export the check, so it is restated here.
 */

const MARK = "x-mcp-header";
/** RFC 9110 `token`: one or more tchars. */
const HEADER_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HEADER_TYPES = new Set(["string", "integer", "boolean"]);
/** Positions a `properties` chain must not pass through. */
const UNREACHABLE = [
  "items",
  "prefixItems",
  "contains",
  "additionalProperties",
  "unevaluatedProperties",
  "unevaluatedItems",
  "propertyNames",
  "patternProperties",
  "dependentSchemas",
  "oneOf",
  "anyOf",
  "allOf",
  "not",
  "if",
  "then",
  "else",
  "$defs",
  "definitions",
];
/** Of those, the ones whose value is an object of named subschemas. */
const NAMED_SUBSCHEMAS = new Set(["patternProperties", "dependentSchemas", "$defs", "definitions"]);

/** Why a tool's `x-mcp-header` markings are invalid, or undefined when they are fine (or absent). */
export function invalidHeaderMarking(inputSchema: unknown): string | undefined {
  const seen = new Map<string, string>();
  const visit = (node: unknown, path: string, reachable: boolean): string | undefined => {
    if (typeof node !== "object" || node === null) return undefined;
    const schema = node as Record<string, unknown>;
    if (MARK in schema) {
      const problem = checkMark(schema, path, reachable, seen);
      if (problem) return problem;
    }
    if (typeof schema.properties === "object" && schema.properties !== null) {
      for (const [key, child] of Object.entries(schema.properties)) {
        const problem = visit(child, path ? `${path}.${key}` : key, reachable);
        if (problem) return problem;
      }
    }
    for (const keyword of UNREACHABLE) {
      const sub = schema[keyword];
      if (sub === undefined) continue;
      const branches = Array.isArray(sub)
        ? sub
        : NAMED_SUBSCHEMAS.has(keyword) && typeof sub === "object" && sub !== null
          ? Object.values(sub)
          : [sub];
      for (const branch of branches) {
        const problem = visit(branch, `${path}<${keyword}>`, false);
        if (problem) return problem;
      }
    }
    return undefined;
  };
  return visit(inputSchema, "", true);
}

function checkMark(schema: Record<string, unknown>, path: string, reachable: boolean, seen: Map<string, string>): string | undefined {
  const where = path || "(root)";
  if (!reachable || path === "") return `${where}: ${MARK} is allowed only on properties reached through 'properties' alone`;
  const header = schema[MARK];
  if (typeof header !== "string" || !HEADER_TOKEN.test(header)) return `${where}: ${MARK} must be a non-empty HTTP token`;
  if (typeof schema.type !== "string" || !HEADER_TYPES.has(schema.type))
    return `${where}: ${MARK} is allowed only on string, integer or boolean properties`;
  const earlier = seen.get(header.toLowerCase());
  if (earlier !== undefined) return `${MARK} "${header}" repeats "${earlier}" (header names ignore case)`;
  seen.set(header.toLowerCase(), header);
  return undefined;
}

/**
 * Whether a schema marks a parameter with `x-mcp-header` where a mark counts:
 * on properties reached through `properties` alone (a tool with a mark
 * anywhere else is not offered at all, see invalidHeaderMarking).
 */
export function hasHeaderMark(inputSchema: unknown): boolean {
  if (typeof inputSchema !== "object" || inputSchema === null) return false;
  const properties = (inputSchema as Record<string, unknown>).properties;
  if (typeof properties !== "object" || properties === null) return false;
  return Object.values(properties).some((child) => (typeof child === "object" && child !== null && MARK in child) || hasHeaderMark(child));
}
