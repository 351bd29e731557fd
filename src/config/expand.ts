import { formatPath } from "./field-text.ts";
import type { ConfigIssue } from "../kernel/settings.ts";
import { keyedRecord, ownValue } from "../safety/keys.ts";
import { ENV_REFERENCE as REFERENCE } from "./references.ts";

export interface Expansion {
  readonly issues: ConfigIssue[];
  /** Values that were substituted; they must never be shown. */
  readonly secrets: Set<string>;
}

/**
 * Expands `${NAME}` in every string value of `value` (never in keys), once:
 * a substituted value that itself contains `${OTHER}` stays as it is.
 * A missing variable is reported with the path and the variable's name only,
 * and left unexpanded when `strict` is false (a disabled definition).
 */
export function expandStrings<T>(
  value: T,
  env: NodeJS.ProcessEnv,
  path: readonly (string | number)[],
  expansion: Expansion,
  strict: boolean,
): T {
  if (typeof value === "string") return expandOne(value, env, path, expansion, strict) as T;
  if (Array.isArray(value)) {
    return value.map((item, index) => expandStrings(item, env, [...path, index], expansion, strict)) as T;
  }
  if (typeof value === "object" && value !== null) {
    const out = keyedRecord<unknown>();
    for (const [key, item] of Object.entries(value)) out[key] = expandStrings(item, env, [...path, key], expansion, strict);
    return out as T;
  }
  return value;
}

function expandOne(
  text: string,
  env: NodeJS.ProcessEnv,
  path: readonly (string | number)[],
  expansion: Expansion,
  strict: boolean,
): string {
  return text.replace(REFERENCE, (reference, name: string) => {
    // Own variables only: `${constructor}` is a missing variable, not a member of every object.
    const resolved = ownValue(env, name);
    if (resolved === undefined) {
      if (strict) expansion.issues.push({ path: formatPath(path), message: `environment variable ${name} is not set` });
      return reference;
    }
    if (resolved !== "") expansion.secrets.add(resolved);
    return resolved;
  });
}

/** True when a string still holds a `${NAME}` reference. */
export function hasReference(text: string): boolean {
  REFERENCE.lastIndex = 0;
  const found = REFERENCE.test(text);
  REFERENCE.lastIndex = 0;
  return found;
}
