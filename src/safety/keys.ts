/**
 * Keys that come from settings, a server or a person (server names, tool
 * names, header and variable names, typed arguments) may be `__proto__`,
 * `constructor`, `toString` or `valueOf`. On an ordinary object those read
 * inherited members and `obj["__proto__"] = x` replaces the prototype instead
 * of storing a value. Such keys go only into objects without a prototype (or
 * a Map), and fixed tables are read only for their own keys.
 */

/**
 * An empty object without a prototype, for keys that come from outside. Made
 * as `{}` whose prototype is then taken away: V8 keeps it a fast object,
 * where `Object.create(null)` starts one in dictionary mode (twice the memory
 * per definition of a settings file with many servers).
 */
export function keyedRecord<T>(): Record<string, T> {
  const record = {};
  Object.setPrototypeOf(record, null);
  return record as Record<string, T>;
}

/** A copy of `record` without a prototype (own keys only, `__proto__` included). */
export function keyedCopy<T>(record: Readonly<Record<string, T>>): Record<string, T> {
  return Object.assign(keyedRecord<T>(), record);
}

/** `table[key]` when `key` is one of the table's own keys, else undefined (never an inherited member). */
export function ownValue<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}

/**
 * JSON.parse whose objects have no prototype: every key of the text is an
 * ordinary key. The parsed objects lose their prototype in place (one walk,
 * no copies): a reviver that copied each object held twice the memory and
 * took ten times as long (a 100 MB settings file: 33 s and 790 MB).
 */
export function parseJson(text: string): unknown {
  const value: unknown = JSON.parse(text);
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (typeof next !== "object" || next === null) continue;
    if (Array.isArray(next)) {
      for (const item of next) if (typeof item === "object" && item !== null) pending.push(item);
      continue;
    }
    Object.setPrototypeOf(next, null);
    for (const key in next) {
      const item = (next as Record<string, unknown>)[key];
      if (typeof item === "object" && item !== null) pending.push(item);
    }
  }
  return value;
}

/** A JSON object (not an array, not null): what untrusted input must be before its fields are read. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
