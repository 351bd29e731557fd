/*
 * String values with variables, host by host. pi-mcp knows one form,
 * `${NAME}`, substituted from Pi's environment in every string value of a
 * definition. A value converts only when the result means exactly what it
 * meant to its host; otherwise the conversion gives a reason. Reasons name the
 * form of a reference, never the value around it (a default or a literal may
 * be a secret).
 */

export type Converted = { readonly ok: true; readonly value: string } | { readonly ok: false; readonly reason: string };

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** pi-mcp's own reference form (src/config/expand.ts). */
const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** How one host writes variables in its MCP configuration. */
export interface VariableDialect {
  /** The host's name, for reasons. */
  readonly host: string;
  /** `${env:NAME}` is the environment variable NAME (VS Code, Cursor). */
  readonly envPrefix: boolean;
  /** Plain `${NAME}` forms the host fills in itself, not from the environment. */
  readonly hostVariables: ReadonlySet<string>;
  /** `${NAME:-default}` is an environment variable with a fallback (Claude Code). */
  readonly defaults: boolean;
}

/** `${env:NAME}` → `${NAME}`; `${NAME}` stays; every other `${…}` form is a reason. */
export function convertTemplate(text: string, dialect: VariableDialect): Converted {
  let out = "";
  let index = 0;
  for (;;) {
    const start = text.indexOf("${", index);
    const end = start < 0 ? -1 : text.indexOf("}", start + 2);
    if (start < 0 || end < 0) {
      // An unclosed `${` is plain text for the hosts and for pi-mcp alike.
      out += text.slice(index);
      return { ok: true, value: out };
    }
    out += text.slice(index, start);
    const inner = text.slice(start + 2, end);
    const converted = convertReference(inner, dialect);
    if (!converted.ok) return converted;
    out += converted.value;
    index = end + 1;
  }
}

function convertReference(inner: string, dialect: VariableDialect): Converted {
  if (NAME.test(inner)) {
    if (dialect.hostVariables.has(inner)) {
      return { ok: false, reason: `uses \${${inner}}, which ${dialect.host} fills in itself; pi-mcp has no such variable` };
    }
    return { ok: true, value: `\${${inner}}` };
  }
  const colon = inner.indexOf(":");
  const prefix = colon > 0 ? inner.slice(0, colon) : "";
  const rest = colon > 0 ? inner.slice(colon + 1) : "";
  if (dialect.envPrefix && prefix === "env" && NAME.test(rest)) return { ok: true, value: `\${${rest}}` };
  if (prefix === "input") {
    return {
      ok: false,
      reason: `uses an input variable (\${input:…}) that ${dialect.host} asks for; pi-mcp cannot ask: set an environment variable and write \${NAME}`,
    };
  }
  if (dialect.defaults && NAME.test(prefix) && rest.startsWith("-")) {
    return { ok: false, reason: "uses a default value (${NAME:-…}); pi-mcp has no default values" };
  }
  const form = /^[A-Za-z]+$/.test(prefix) ? `\${${prefix}:…}` : "a ${…} form";
  return { ok: false, reason: `uses ${form}, which pi-mcp cannot express` };
}

/** The `${NAME}` references in a pi-mcp string, in order. */
export function references(text: string): string[] {
  return [...text.matchAll(REFERENCE)].map((match) => match[1]!);
}

/*
 * Pi's values. In `env`, `headers` and `oauth.clientSecret` Pi resolves
 * `!command` (the whole value runs as a shell command), `${NAME}` and `$NAME`
 * (environment variables), and the escapes `$$` (a `$`) and `$!` (a `!`).
 * Every other field is taken literally, except that a leading `~` in
 * `command`, `args` and `cwd` names the home folder.
 */

/** A Pi value that Pi resolves (env, headers, oauth.clientSecret). */
export function convertPiValue(text: string): Converted {
  if (text.startsWith("!")) {
    return { ok: false, reason: "runs a shell command (!…) for its value; pi-mcp cannot run commands for values" };
  }
  let out = "";
  const names: string[] = [];
  let index = 0;
  while (index < text.length) {
    const dollar = text.indexOf("$", index);
    if (dollar < 0) {
      out += text.slice(index);
      break;
    }
    out += text.slice(index, dollar);
    const next = text[dollar + 1];
    if (next === "$" || next === "!") {
      out += next;
      index = dollar + 2;
      continue;
    }
    if (next === "{") {
      const end = text.indexOf("}", dollar + 2);
      if (end < 0) {
        out += "$";
        index = dollar + 1;
        continue;
      }
      const name = text.slice(dollar + 2, end);
      if (NAME.test(name)) {
        out += `\${${name}}`;
        names.push(name);
      } else {
        out += text.slice(dollar, end + 1);
      }
      index = end + 1;
      continue;
    }
    const bare = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(dollar + 1));
    if (bare) {
      out += `\${${bare[0]}}`;
      names.push(bare[0]);
      index = dollar + 1 + bare[0].length;
      continue;
    }
    out += "$";
    index = dollar + 1;
  }
  // Escaped or literal text must not turn into a reference pi-mcp would substitute.
  const found = references(out);
  if (found.length !== names.length || found.some((name, at) => name !== names[at])) {
    return { ok: false, reason: "holds literal text that pi-mcp would read as a ${NAME} reference" };
  }
  return { ok: true, value: out };
}

/** A value its host takes literally, where pi-mcp would still substitute `${NAME}`. */
export function convertLiteral(text: string, host: string): Converted {
  if (references(text).length > 0) {
    return { ok: false, reason: `${host} takes \${…} here literally, but pi-mcp would substitute it` };
  }
  return { ok: true, value: text };
}

/** A Pi value that Pi takes literally (url, oauth.clientId, …). */
export function convertPiLiteral(text: string): Converted {
  return convertLiteral(text, "Pi");
}

/** `command`, `args` and `cwd`: literal, except a leading `~` or `~/`, which becomes `${HOME}`. */
export function convertPiPath(text: string): Converted {
  const literal = convertPiLiteral(text);
  if (!literal.ok) return literal;
  if (text === "~") return { ok: true, value: "${HOME}" };
  if (text.startsWith("~/")) return { ok: true, value: `\${HOME}${text.slice(1)}` };
  return literal;
}
