/**
 * One server's entry in the credential store, as an OAuth session reads and
 * changes it. The lock choreography of the sessions lives here:
 *
 * - `read()` keeps what it read; `read(true)` reads the store again.
 * - `change()` edits the entry under the store's lock (directly while this
 *   session holds the lock already), re-reading the file first.
 * - `hold()` takes the lock and keeps it until `release()`: the SDK's auth()
 *   reads the tokens it is about to refresh and later saves new ones (or gives
 *   up), and no other process may refresh in between, or a refresh token it
 *   rotated would be lost. A lock the SDK leaves taken is released after
 *   HELD_LOCK_LIMIT_MS.
 * - `locked()` runs work under the lock on the entry as stored now, with a
 *   `save` that writes it back.
 *
 * An entry bound to another URL or client is never used: reads answer only
 * for this binding, and a change replaces such an entry (it is told so).
 */
import { bindingMatches, type Binding, type CredentialStore, type StoredEntry } from "./store.ts";

/** How long a refresh may hold the store's lock when the SDK leaves it without saving (a safety net). */
const HELD_LOCK_LIMIT_MS = 20_000;

export class CredentialEntry {
  private cached: StoredEntry | undefined;
  private loaded = false;
  private held: { release: () => Promise<void>; timer: NodeJS.Timeout } | undefined;

  constructor(
    private readonly store: CredentialStore,
    private readonly server: string,
    private readonly binding: Binding,
  ) {}

  /** What was last read or written (undefined when nothing is stored for this binding). */
  get current(): StoredEntry | undefined {
    return this.cached;
  }

  /** The stored entry (read once, then kept; `fresh` re-reads). */
  async read(fresh = false): Promise<StoredEntry | undefined> {
    if (fresh || !this.loaded) this.keep(await this.store.entry(this.server, this.binding));
    return this.cached;
  }

  /**
   * Changes the stored entry: directly while this session holds the lock, otherwise under it.
   * `change` learns whether it would replace an entry bound to another URL or client, and returns false to write nothing.
   */
  async change(change: (entry: StoredEntry, replacing: boolean) => unknown): Promise<void> {
    if (!this.held) {
      this.keep(await this.store.updateEntry(this.server, this.binding, change));
      return;
    }
    const file = await this.store.read();
    const current = file.servers[this.server];
    const matches = bindingMatches(current, this.binding);
    const entry: StoredEntry = matches ? current : { url: this.binding.url, client: this.binding.client };
    if (change(entry, !matches && current !== undefined) !== false) {
      file.servers[this.server] = entry;
      await this.store.write(file);
    }
    this.keep(entry);
  }

  /**
   * Runs `work` under the store's lock with the entry as stored now (undefined
   * when none is bound to this binding); `save` writes the store with the
   * entry as `work` changed it.
   */
  async locked<T>(work: (entry: StoredEntry | undefined, save: () => Promise<void>) => Promise<T>): Promise<T> {
    return this.store.withLock(async () => {
      const file = await this.store.read();
      const current = file.servers[this.server];
      const entry = bindingMatches(current, this.binding) ? current : undefined;
      this.cached = entry;
      return work(entry, () => this.store.write(file));
    });
  }

  /** Takes the store's lock and keeps it until `release()` (or the safety limit). */
  async hold(): Promise<void> {
    if (this.held) return;
    let release: () => void = () => undefined;
    const acquired = new Promise<void>((resolve) => (release = resolve));
    let entered: () => void = () => undefined;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    const done = this.store.withLock(async () => {
      entered();
      await acquired;
    });
    await Promise.race([inside, done]); // `done` rejects when the lock cannot be taken
    const timer = setTimeout(() => void this.release(), HELD_LOCK_LIMIT_MS);
    timer.unref?.();
    this.held = {
      release: async () => {
        release();
        await done.catch(() => undefined);
      },
      timer,
    };
  }

  /** Releases a lock `hold()` took; nothing when none is held. */
  async release(): Promise<void> {
    const held = this.held;
    this.held = undefined;
    if (!held) return;
    clearTimeout(held.timer);
    await held.release();
  }

  private keep(entry: StoredEntry | undefined): void {
    this.cached = entry;
    this.loaded = true;
  }
}
