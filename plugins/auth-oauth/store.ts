/**
 * The OAuth credential store: `<agentDir>/mcp-auth.json`, mode 0600 in a
 * folder no wider than 0700.
 *
 * One entry per server name, bound to the server URL and the client identity
 * (configured client id, or dynamic registration, and the redirect URI). An
 * entry is never used for another URL or client: `entry()` answers only when the
 * binding matches.
 *
 * Every change runs under proper-lockfile (`mcp-auth.json.lock`), re-reads the
 * file, and replaces it atomically with the writer settings use too
 * (temporary file, flush, rename; the temporary file is removed when any step
 * fails). A file that is not a valid store is never overwritten by ordinary
 * operations: they fail with a message naming `logout --all --force`, the
 * explicit reset. Nothing here puts a stored value into an error message.
 *
 * The store never follows a symbolic link: one at `mcp-auth.json` is refused
 * (tokens are never read from, or written to, a file chosen by whoever made
 * the link); the reset removes the link itself, not what it points to.
 */
import { chmod, lstat, mkdir, rm, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { OAuthClientInformationMixed, OAuthTokens } from "@modelcontextprotocol/client";
import { readFileNoFollow, removeTemporaries, withFileLock, writeAtomically } from "../../src/config/atomic-file.ts";
import type { CredentialQueries } from "../../src/kernel/commands.ts";
import { DEFAULTS, usesOAuth, type RemoteDefinition } from "../../src/kernel/settings.ts";
import { CredentialStoreError } from "./errors.ts";
import { isRecord, keyedRecord, parseJson } from "../../src/safety/keys.ts";
import { AUTH_FILE_NAME, readTextNoFollowSync } from "../../src/config/credential-stamp.ts";

export { AUTH_FILE_NAME };
const STORE_VERSION = 1;
/** A pending authorization flow can be completed this long after it started. */
export const PENDING_FLOW_TTL_MS = 30 * 60_000;

/** What an entry is bound to. */
export interface Binding {
  readonly url: string;
  /** `configured:<client id>` or `dynamic`, plus the redirect URI: `<client>|<redirect uri>`. */
  readonly client: string;
}

/** Discovery results kept with a flow and with the tokens (the SDK's OAuthDiscoveryState, JSON-safe). */
export interface StoredDiscovery {
  readonly authorizationServerUrl: string;
  readonly resourceMetadataUrl?: string;
  readonly resourceMetadata?: Record<string, unknown>;
  readonly authorizationServerMetadata?: Record<string, unknown>;
  /** Accepted by the 2025-03-26 rule (see legacy.ts): used as is, never discovered again in the background. */
  readonly legacyIssuer?: true;
}

export type StoredClient = OAuthClientInformationMixed & { issuer?: string };

export interface StoredTokens {
  readonly tokens: OAuthTokens & { issuer?: string };
  /** Epoch ms when the access token expires, when the authorization server said (`expires_in`). */
  readonly expiresAt?: number;
  /** Epoch ms when they were obtained. */
  readonly obtainedAt: number;
}

/** An authorization flow started by `auth` and not completed yet: what the callback leg needs. */
export interface PendingFlow {
  readonly state: string;
  readonly codeVerifier: string;
  readonly redirectUri: string;
  readonly issuer: string;
  readonly discovery: StoredDiscovery;
  readonly scope?: string;
  readonly startedAt: number;
}

export interface StoredEntry extends Binding {
  /** Client information obtained by registration or a metadata document (never a configured client's secret). */
  clientInformation?: StoredClient;
  tokens?: StoredTokens;
  /** Discovery state the tokens were obtained with (token endpoint for refreshes). */
  discovery?: StoredDiscovery;
  /** The RFC 8707 resource the tokens are for. */
  resource?: string;
  pending?: PendingFlow;
  /** Scope a running connection was refused (step-up, or authorization it could not start): the next `auth` asks for it. */
  scopeHint?: string;
  /** Epoch ms of the explicit authorization the tokens descend from (refreshes keep it). */
  authorizedAt?: number;
}

interface StoreFile {
  version: number;
  servers: Record<string, StoredEntry>;
}

export function bindingMatches(entry: StoredEntry | undefined, binding: Binding): entry is StoredEntry {
  return entry !== undefined && entry.url === binding.url && entry.client === binding.client;
}

export class CredentialStore {
  readonly path: string;
  constructor(readonly agentDir: string) {
    this.path = join(agentDir, AUTH_FILE_NAME);
  }

  private malformed(problem: string): CredentialStoreError {
    return new CredentialStoreError(
      `${this.path} ${problem}, so stored MCP credentials cannot be used and the file is left untouched; ` +
        `run \`pi-mcp logout --all --force\` (or /mcp logout --all --force) to reset it`,
    );
  }

  /** The parsed store; an absent file is an empty store. Throws CredentialStoreError for anything else unusable. */
  async read(): Promise<StoreFile> {
    let text: string;
    try {
      text = await readFileNoFollow(this.path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return { version: STORE_VERSION, servers: keyedRecord() };
      if (code === "ELOOP")
        throw this.malformed("is a symbolic link, which pi-mcp does not follow for credentials (replace it with the file itself)");
      throw this.malformed(`cannot be read (${code ?? "error"})`);
    }
    let data: unknown;
    try {
      data = parseJson(text);
    } catch {
      // The parser's message could quote stored bytes: say only what is wrong.
      throw this.malformed("is not valid JSON");
    }
    if (!isRecord(data) || data.version !== STORE_VERSION || !isRecord(data.servers))
      throw this.malformed("is not a pi-mcp credential store");
    for (const entry of Object.values(data.servers)) {
      if (!isRecord(entry) || typeof entry.url !== "string" || typeof entry.client !== "string")
        throw this.malformed("has a malformed entry");
    }
    return data as unknown as StoreFile;
  }

  /** Creates the folder (0700) or narrows an existing one to 0700. */
  private async prepareFolder(): Promise<void> {
    const folder = dirname(this.path);
    await mkdir(folder, { recursive: true, mode: 0o700 });
    const mode = (await stat(folder)).mode & 0o777;
    if ((mode & 0o077) !== 0) await chmod(folder, mode & 0o700);
  }

  /** Runs `work` holding the store's lock (cross-process); the lock is released whatever happens. */
  async withLock<T>(work: () => Promise<T>): Promise<T> {
    await this.prepareFolder();
    const lockFailed = () => new CredentialStoreError(`${this.path} is locked by another process; nothing was changed`);
    return withFileLock(this.path, { followLinks: false, lockFailed }, () => work());
  }

  /**
   * Re-reads the store under its lock, lets `change` edit it, and writes it back
   * (0600, atomically) when `change` returns true. A malformed store is never written.
   */
  async update<T>(change: (servers: Record<string, StoredEntry>) => { result: T; changed: boolean }): Promise<T> {
    return this.withLock(async () => {
      const file = await this.read();
      const { result, changed } = change(file.servers);
      if (changed) await this.write(file);
      return result;
    });
  }

  /** Writes the whole store; only call while holding the lock. */
  async write(file: StoreFile): Promise<void> {
    await writeAtomically(this.path, `${JSON.stringify({ version: STORE_VERSION, servers: file.servers }, null, 2)}\n`, 0o600);
  }

  /** The entry for `server`, only when it is bound to the same URL and client. */
  async entry(server: string, binding: Binding): Promise<StoredEntry | undefined> {
    const entry = (await this.read()).servers[server];
    return bindingMatches(entry, binding) ? entry : undefined;
  }

  /**
   * Changes the entry of `server` for `binding` (a fresh one when the stored entry
   * is bound to something else, which it replaces: `change` is told so). `change`
   * returns false to write nothing.
   */
  async updateEntry(server: string, binding: Binding, change: (entry: StoredEntry, replacing: boolean) => unknown): Promise<StoredEntry> {
    return this.update((servers) => {
      const current = servers[server];
      const matches = bindingMatches(current, binding);
      const entry: StoredEntry = matches ? current : { url: binding.url, client: binding.client };
      const changed = change(entry, !matches && current !== undefined) !== false;
      if (changed) servers[server] = entry;
      return { result: entry, changed };
    });
  }

  /**
   * What identifies the credentials stored for `server` and `binding`, read
   * synchronously (it is small): the client and the authorization the tokens
   * descend from; a refresh keeps it, a logout or a new `auth` changes it.
   * Holds no token value.
   */
  identitySync(server: string, binding: Binding): string {
    let entry: StoredEntry | undefined;
    try {
      entry = (parseJson(readTextNoFollowSync(this.path)) as { servers?: Record<string, StoredEntry> }).servers?.[server];
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === "ENOENT" ? "none" : "unreadable";
    }
    if (!bindingMatches(entry, binding)) return "none";
    const client = entry.clientInformation?.client_id ?? "";
    return entry.tokens ? `${client}:${entry.authorizedAt ?? "tokens"}` : `${client}:none`;
  }

  /**
   * Whether credentials (tokens or a registered client) are stored for `server`
   * that a connection would use: bound to `binding`, the server's current URL
   * and client identity. A malformed store counts as none.
   */
  async has(server: string, binding: Binding): Promise<boolean> {
    try {
      const entry = (await this.read()).servers[server];
      return bindingMatches(entry, binding) && (entry.tokens !== undefined || entry.clientInformation !== undefined);
    } catch {
      return false;
    }
  }

  /** Removes everything stored for `server`; true when there was something. */
  async remove(server: string): Promise<boolean> {
    return this.update((servers) => {
      if (!Object.hasOwn(servers, server)) return { result: false, changed: false };
      delete servers[server];
      return { result: true, changed: true };
    });
  }

  /**
   * `logout --all --force`: deletes the store whatever it contains (the one
   * operation that may discard a malformed file), a symbolic link in its place
   * (not its target), and every temporary file a killed writer left, whatever
   * its age: those can hold tokens and PKCE verifiers too.
   */
  async reset(): Promise<boolean> {
    return this.withLock(async () => {
      const existed = await lstat(this.path).then(
        () => true,
        () => false,
      );
      await rm(this.path, { force: true });
      const leftovers = await removeTemporaries(this.path, 0);
      return existed || leftovers > 0;
    });
  }
}

/** The binding of a remote definition: its URL and its client identity. */
export function bindingFor(url: string, clientId: string | undefined, redirectUri: string): Binding {
  return { url, client: `${clientId === undefined ? "dynamic" : `configured:${clientId}`}|${redirectUri}` };
}

/** What a remote definition's stored credentials must be bound to (any auth other than oauth counts as none). */
export function definitionBinding(definition: RemoteDefinition): Binding {
  const auth = definition.auth?.type === "oauth" ? definition.auth : undefined;
  return bindingFor(definition.url, auth?.clientId, auth?.redirectUri ?? DEFAULTS.oauthRedirectUri);
}

/**
 * What commands ask of the stored credentials (`list`, `get`, `remove
 * --logout`): only credentials a connection would use count, those of an
 * OAuth-capable definition bound to its current URL and client.
 */
export function credentialQueries(agentDir: string): CredentialQueries {
  const store = new CredentialStore(agentDir);
  return {
    has: (server, definition) => (usesOAuth(definition) ? store.has(server, definitionBinding(definition)) : Promise.resolve(false)),
    remove: (server) => store.remove(server),
  };
}
