import { isRecord } from "../safety/keys.ts";
import { hasReference } from "../config/expand.ts";

/**
 * A definition as written, with every literal value (no `${NAME}` in it) of
 * its environment, headers, bearer token and client secret replaced by
 * `marker`: such values are credentials as often as not, and pi-mcp cannot
 * tell which (it never guesses secrets from names). `${NAME}` references are
 * shown as written. `masked` says whether anything was replaced.
 */
export function maskLiterals(
  definition: Readonly<Record<string, unknown>>,
  marker: string,
): { value: Record<string, unknown>; masked: boolean } {
  let masked = false;
  const hide = (value: unknown) => {
    if (typeof value === "string" && value !== "" && !hasReference(value)) {
      masked = true;
      return marker;
    }
    return value;
  };
  const value: Record<string, unknown> = { ...definition };
  for (const field of ["environment", "headers"]) {
    const map = value[field];
    if (isRecord(map)) value[field] = Object.fromEntries(Object.entries(map).map(([key, item]) => [key, hide(item)]));
  }
  if (isRecord(value.auth)) {
    const auth = { ...value.auth };
    for (const field of ["token", "clientSecret"]) if (auth[field] !== undefined) auth[field] = hide(auth[field]);
    value.auth = auth;
  }
  return { value, masked };
}
