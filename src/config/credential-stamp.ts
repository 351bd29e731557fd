/**
 * What the stored OAuth credentials of a server say about its identity, read
 * without the credential store's machinery (no lock library, no SDK types):
 * the Pi entry reads it while Pi loads the extension, to tell whether a
 * cached catalog may still be offered. The store's own `identitySync` is built
 * on the same pieces, so the two change together.
 */
import { closeSync, constants, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { isRecord, parseJson } from "../safety/keys.ts";

/** The credential store's file name in Pi's agent folder. */
export const AUTH_FILE_NAME = "mcp-auth.json";

/** Reads a small file synchronously without following a symbolic link there (`ELOOP` when it is one). */
export function readTextNoFollowSync(path: string): string {
  const fd = openSync(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  try {
    return readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
}

/** The parsed credential file, "none" when there is none, "unreadable" for anything else (a link, bad JSON). */
export function readCredentialFile(agentDir: string): Record<string, unknown> | "none" | "unreadable" {
  try {
    const data = parseJson(readTextNoFollowSync(join(agentDir, AUTH_FILE_NAME)));
    return isRecord(data) ? data : "unreadable";
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? "none" : "unreadable";
  }
}

/**
 * Everything of one server's stored entry that its identity depends on: the
 * binding (URL, client), the client id, whether tokens are stored and when
 * they were authorized. Refreshed tokens change none of it; a logout, a new
 * `auth` or another client does. Never a token, secret or verifier.
 */
export function credentialStamp(file: Record<string, unknown> | "none" | "unreadable", server: string): string {
  if (typeof file === "string") return file;
  const servers = isRecord(file.servers) ? file.servers : undefined;
  const entry = servers && Object.hasOwn(servers, server) && isRecord(servers[server]) ? servers[server] : undefined;
  if (!entry) return "none";
  const client = isRecord(entry.clientInformation) ? entry.clientInformation.client_id : undefined;
  return JSON.stringify([entry.url, entry.client, client ?? "", entry.tokens !== undefined, entry.authorizedAt ?? null]);
}
