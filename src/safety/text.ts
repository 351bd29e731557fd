import type { Redactor } from "../kernel/types.ts";

export const REDACTED = "‹redacted›";
/** Shorter values would blank out ordinary words and numbers; they are too weak to be real secrets. */
const MIN_SECRET_LENGTH = 4;

/** Replaces every exact occurrence of each secret, longest first so overlapping values vanish whole. */
export function createRedactor(secrets: Iterable<string>): Redactor {
  const values = [...new Set(secrets)].filter((value) => value.length >= MIN_SECRET_LENGTH).sort((a, b) => b.length - a.length);
  if (values.length === 0) return (text) => text;
  return (text) => {
    let out = text;
    for (const value of values) out = out.split(value).join(REDACTED);
    return out;
  };
}

// CSI (ESC [ or 8-bit CSI, ... final), OSC (ESC ] ... BEL or ST; 8-bit OSC up to the next control),
// other two-byte ESC sequences, C0 controls other than tab and newline, DEL, and the C1 range.
const TERMINAL_CONTROLS =
  // eslint-disable-next-line no-control-regex
  /(?:\u001b\[|\u009b)[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u009d[^\u0000-\u001f\u007f-\u009f]*(?:\u0007|\u009c|\u001b\\)?|\u001b[@-_]?|[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** Removes terminal control sequences from text that came from a server or a setting. */
export function stripTerminalControls(text: string): string {
  return text.replace(TERMINAL_CONTROLS, "");
}

/** Text safe to show a person: no terminal controls and no secret from settings. */
export function safeText(text: string, redact: Redactor): string {
  return redact(stripTerminalControls(text));
}

/** JSON text whose strings cannot drive a terminal: DEL and C1 are escaped too (JSON.stringify escapes only C0). */
export function terminalSafeJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(/[\u007f-\u009f]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
