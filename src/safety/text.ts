import type { Redactor } from "../kernel/types.ts";

export const REDACTED = "‹redacted›";
/** Shorter values would blank out ordinary words and numbers; they are too weak to be real secrets. */
const MIN_SECRET_LENGTH = 4;

/**
 * Every way a secret can look in text a person is shown: as written, as it
 * looks once terminal controls are stripped (a trailing `\r` from a `.env`
 * edited on Windows, a header value with `\r\n`; trimmed too, as an HTTP
 * header value arrives), JSON-escaped (an SDK message that quotes a server's
 * answer with JSON.stringify), and percent-encoded as each part of a URL
 * encodes it (a `${PW}` in a URL's user info, a `?key=${KEY}` a server
 * echoes, a value a server passed through encodeURIComponent).
 */
function secretForms(value: string): string[] {
  const stripped = stripTerminalControls(value);
  const written = [value, stripped, stripped.trim()];
  return [...written, JSON.stringify(value).slice(1, -1), JSON.stringify(stripped).slice(1, -1), ...written.flatMap(percentEncodedForms)];
}

/** A value as each URL part and encoder percent-encodes it, in upper- and lower-case hex. */
function percentEncodedForms(value: string): string[] {
  const url = new URL("http://host/");
  url.username = value;
  url.password = value;
  url.hash = value;
  const path = new URL("http://host/");
  path.pathname = `/${value}`;
  const encoded = [
    safeEncode(encodeURIComponent, value),
    safeEncode(encodeURI, value),
    url.username,
    url.password,
    url.hash.slice(1),
    path.pathname.slice(1),
    new URLSearchParams({ k: value }).toString().slice(2),
    encodeSearch(value),
  ];
  return encoded.flatMap((form) => [form, form.replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase())]).filter((form) => form !== value);
}

/** How a URL's query (`?…`) encodes a value written into it. */
function encodeSearch(value: string): string {
  const url = new URL("http://host/");
  url.search = value;
  return url.search.replace(/^\?/, "");
}

/** encodeURI(Component), or "" for a value they refuse (a lone surrogate). */
function safeEncode(encode: (text: string) => string, value: string): string {
  try {
    return encode(value);
  } catch {
    return "";
  }
}

/**
 * Replaces every exact occurrence of each secret, in each of its forms,
 * longest first so overlapping values vanish whole. `base` adds the secrets
 * of a wider redactor (a command's values on top of the settings' ones).
 */
export function createRedactor(secrets: Iterable<string>, base?: Redactor): Redactor {
  const given = [...new Set([...(base?.secrets ?? []), ...secrets])];
  const forms = [...new Set(given.flatMap(secretForms))]
    .filter((form) => form.length >= MIN_SECRET_LENGTH)
    .sort((a, b) => b.length - a.length);
  const redact = (text: string) => {
    let out = text;
    for (const form of forms) if (out.includes(form)) out = out.split(form).join(REDACTED);
    return out;
  };
  return Object.assign(redact, { secrets: given, forms, reach: forms[0]?.length ?? 0 });
}

// CSI (ESC [ or 8-bit CSI, ... final), OSC (ESC ] ... BEL or ST; 8-bit OSC up to the next control),
// other two-byte ESC sequences, C0 controls other than tab and newline, DEL, the C1 range, and the
// bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069), which reorder
// what a terminal shows ("Trojan Source").
const TERMINAL_CONTROLS =
  // eslint-disable-next-line no-control-regex
  /(?:\u001b\[|\u009b)[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u009d[^\u0000-\u001f\u007f-\u009f]*(?:\u0007|\u009c|\u001b\\)?|\u001b[@-_]?|[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** Removes terminal control sequences from text that came from a server or a setting. */
export function stripTerminalControls(text: string): string {
  return text.replace(TERMINAL_CONTROLS, "");
}

/**
 * Text safe to show a person: secrets redacted as written, then terminal
 * controls stripped, then redacted again (a secret a server split with an
 * escape sequence only appears once the escape is gone).
 */
export function safeText(text: string, redact: Redactor): string {
  return redact(stripTerminalControls(redact(text)));
}

/** At most `maxChars` characters of safe text, cut only after redacting and stripping, with `…` where it was cut. */
export function safeHead(text: string, redact: Redactor, maxChars: number): string {
  return headOf(safeText(text, redact), maxChars);
}

/** At most `maxChars` characters of text that is safe already, with `…` where it was cut; never half a surrogate pair. */
export function headOf(safe: string, maxChars: number): string {
  if (safe.length <= maxChars) return safe;
  return `${withoutBrokenPair(safe.slice(0, maxChars))}…`;
}

export interface TailLimits {
  readonly maxBytes: number;
  readonly maxLines: number;
}

/**
 * The newest part of safe text within `limits` (redacted, stripped, then cut;
 * a cut starts at a line boundary where there is one). `headLost`: the text
 * already lost its beginning (a bounded log), see {@link withoutLeadingFragment}.
 */
export function safeTail(text: string, redact: Redactor, limits: TailLimits, headLost = false): { text: string; cut: boolean } {
  let out = safeText(headLost ? withoutLeadingFragment(text, redact) : text, redact);
  let cut = headLost;
  const lines = out.split("\n");
  if (lines.length > limits.maxLines) {
    out = lines.slice(-limits.maxLines).join("\n");
    cut = true;
  }
  const bytes = Buffer.from(out, "utf8");
  if (bytes.length > limits.maxBytes) {
    const tail = bytes
      .subarray(bytes.length - limits.maxBytes)
      .toString("utf8")
      .replace(/^\uFFFD+/, "");
    // From the next line on, unless that leaves nothing (one long last line is shown cut).
    const newline = tail.indexOf("\n");
    out = newline === -1 || newline === tail.length - 1 ? tail : tail.slice(newline + 1);
    cut = true;
  }
  return { text: out, cut };
}

/**
 * A text whose beginning was dropped (a bounded log keeps only its newest
 * bytes) may start with the end of a secret, which no redaction can recognise
 * any more. Drops as many characters as the longest secret form could leave,
 * then the rest of that line (when a line break follows).
 */
export function withoutLeadingFragment(text: string, redact: Redactor): string {
  const rest = text.slice(Math.max(0, (redact.reach ?? 0) - 1));
  const newline = rest.indexOf("\n");
  // From the next line on, unless that leaves nothing (a log that holds only the end of one long line keeps it).
  return newline === -1 || newline === rest.length - 1 ? rest : rest.slice(newline + 1);
}

/**
 * Where the start of a secret may begin at the end of unfinished text (a
 * stream that has not written the rest of its line yet): the index of the
 * longest trailing piece that is the beginning of a secret form, or
 * `text.length` when there is none. What comes from there is held back
 * until the text goes on, or shown as {@link REDACTED} when it never does.
 */
export function secretStartAtEnd(text: string, redact: Redactor): number {
  let start = text.length;
  for (const form of redact.forms ?? []) {
    for (let length = Math.min(form.length - 1, text.length); length > text.length - start; length--) {
      if (text.endsWith(form.slice(0, length))) {
        start = text.length - length;
        break;
      }
    }
  }
  return start;
}

/** Unfinished text that will not go on: a trailing beginning of a secret (at least as long as a secret can be) is shown as redacted. */
export function withoutTrailingFragment(text: string, redact: Redactor): string {
  const start = secretStartAtEnd(text, redact);
  return text.length - start >= MIN_SECRET_LENGTH ? `${text.slice(0, start)}${REDACTED}` : text;
}

function withoutBrokenPair(text: string): string {
  const last = text.charCodeAt(text.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? text.slice(0, -1) : text;
}

/** JSON text whose strings cannot drive a terminal: DEL and C1 are escaped too (JSON.stringify escapes only C0). */
export function terminalSafeJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(
    /[\u007f-\u009f]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
