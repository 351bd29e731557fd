/** A `${NAME}` reference in a settings string: the variable's name is group 1. */
export const ENV_REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** The names of every variable a settings value refers to, in any of its strings (keys are never expanded). */
export function referencedNames(value: unknown, into: Set<string> = new Set()): Set<string> {
  if (typeof value === "string") {
    for (const match of value.matchAll(ENV_REFERENCE)) into.add(match[1]!);
  } else if (Array.isArray(value)) {
    for (const item of value) referencedNames(item, into);
  } else if (typeof value === "object" && value !== null) {
    for (const item of Object.values(value)) referencedNames(item, into);
  }
  return into;
}
