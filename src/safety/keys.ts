/**
 * Keys that come from settings, a server or a person (server names, tool
 * names, header and variable names, typed arguments) may be `__proto__`,
 * `constructor`, `toString` or `valueOf`. On an ordinary object those read
 * inherited members and `obj["__proto__"] = x` replaces the prototype instead
 * of storing a value. Such keys go only into objects without a prototype (or
 * a Map), and fixed tables are read only for their own keys.
 */

/** An empty object without a prototype, for keys that come from outside. */
export function keyedRecord<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/** A copy of `record` without a prototype (own keys only, `__proto__` included). */
export function keyedCopy<T>(record: Readonly<Record<string, T>>): Record<string, T> {
  return Object.assign(keyedRecord<T>(), record);
}

/** `table[key]` when `key` is one of the table's own keys, else undefined (never an inherited member). */
export function ownValue<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}

/** JSON.parse whose objects have no prototype: every key of the text is an ordinary key. */
export function parseJson(text: string): unknown {
  return JSON.parse(text, (_key, value: unknown) =>
    typeof value === "object" && value !== null && !Array.isArray(value) ? keyedCopy(value as Record<string, unknown>) : value,
  );
}

/** A JSON object (not an array, not null): what untrusted input must be before its fields are read. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
