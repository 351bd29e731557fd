/**
 * Writes the persisted catalogs (the format: catalog-cache.ts). Every change
 * runs under the index's lock (`index.json.lock`, proper-lockfile, as every
 * writer of pi-mcp's files) and replaces files with the project's one atomic
 * writer: another Pi process sharing the agent folder sees the old files or
 * the new ones, never a mix, and records of other sessions are kept. A
 * foreign or broken index is replaced (with a new salt: nothing it named can
 * be found again); catalog files no record names any more are removed.
 */
import { randomBytes } from "node:crypto";
import { chmod, lstat, mkdir, readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { STALE_LOCK_MS, withFileLock, writeAtomically } from "../config/atomic-file.ts";
import { PiMcpError, describeError } from "../kernel/errors.ts";
import type { EraVerdict } from "./era.ts";
import {
  CACHE_VERSION,
  CATALOG_FORMAT,
  INDEX_FORMAT,
  catalogFolder,
  catalogPath,
  indexPath,
  catalogKey,
  keyed,
  readCatalog,
  readIndex,
  type CachedTool,
  type CatalogCounts,
  type CatalogEntry,
  type CatalogFile,
  type IndexFile,
  type RecordServer,
  type StartRecord,
} from "./catalog-cache.ts";

/** Records of this many settings stamps are kept (the newest); their catalogs stay, the others' files go. */
const MAX_RECORDS = 64;

/** One server of a session as the host would offer it again: its catalog and what Pi was given of it. */
export interface SnapshotServer {
  readonly name: string;
  /** The catalog's identity (unsalted; the host's catalogIdentity): the file is named by a keyed hash of it and the server's name. */
  readonly identity: string;
  readonly catalog: readonly CatalogEntry[];
  readonly tools: readonly CachedTool[];
  readonly instructions?: string;
  readonly counts: CatalogCounts;
  /** The connection's era verdict (era.ts), kept with the catalog. */
  readonly era?: EraVerdict;
}

/** What a session offers Pi, to be found again by the next session with the same settings stamp. */
export interface StartSnapshot {
  /** The settings stamp (unsalted). */
  readonly digest: string;
  readonly prompt?: string;
  readonly servers: readonly SnapshotServer[];
  /** Whether `servers` cover every server the first model request of a run without a terminal UI would wait for. */
  readonly complete: boolean;
}

const CATALOG_FILE = /^[0-9a-f]{64}\.json$/;
const CATALOG_TEMPORARY = /^\.[0-9a-f]{64}\.json\.\d+\.[0-9a-f]{8}\.tmp$/;

export class CatalogStore {
  readonly agentDir: string;

  constructor(agentDir: string) {
    this.agentDir = agentDir;
  }

  /** Records `snapshot` (and writes the catalogs it names that are not stored as they are). */
  async save(snapshot: StartSnapshot): Promise<void> {
    const folder = await this.privateFolder();
    const lockFailed = (cause: unknown) =>
      new PiMcpError("lock_timeout", `${indexPath(this.agentDir)} is locked by another writer (${describeError(cause)})`, { cause });
    await withFileLock(indexPath(this.agentDir), { followLinks: false, lockFailed }, async (index) => {
      const current = readIndex(this.agentDir) ?? {
        format: INDEX_FORMAT,
        version: CACHE_VERSION,
        salt: randomBytes(32).toString("hex"),
        starts: [],
      };
      const servers: RecordServer[] = [];
      for (const server of snapshot.servers) servers.push(await this.writeCatalog(current.salt, server));
      const record: StartRecord = {
        key: keyed(current.salt, snapshot.digest),
        savedAt: Date.now(),
        ...(snapshot.prompt !== undefined && { prompt: snapshot.prompt }),
        ...(snapshot.complete && { complete: true as const }),
        servers,
      };
      const others = current.starts.filter((start) => start.key !== record.key);
      const starts = [record, ...others].sort((a, b) => b.savedAt - a.savedAt).slice(0, MAX_RECORDS);
      const next: IndexFile = { format: INDEX_FORMAT, version: CACHE_VERSION, salt: current.salt, starts };
      await index.write(`${JSON.stringify(next)}\n`, 0o600);
      await this.removeUnnamed(folder, next);
    });
  }

  /** The catalog folder, made if missing and narrowed to 0700; one that is not a folder of ours is refused. */
  private async privateFolder(): Promise<string> {
    const folder = catalogFolder(this.agentDir);
    await mkdir(folder, { recursive: true, mode: 0o700 });
    const info = await lstat(folder);
    const uid = process.getuid?.();
    if (!info.isDirectory() || (uid !== undefined && info.uid !== uid))
      throw new PiMcpError("unsafe_folder", `${folder} is not a folder of this user: no catalog is kept`);
    if ((info.mode & 0o077) !== 0) await chmod(folder, 0o700);
    return folder;
  }

  /** Writes one server's catalog unless the same one is stored; returns its record entry. */
  private async writeCatalog(salt: string, server: SnapshotServer): Promise<RecordServer> {
    const fingerprint = catalogKey(salt, server.name, server.identity);
    const file: CatalogFile = {
      format: CATALOG_FORMAT,
      version: CACHE_VERSION,
      catalog: fingerprint,
      server: server.name,
      savedAt: Date.now(),
      ...(server.instructions !== undefined && { instructions: server.instructions }),
      counts: server.counts,
      tools: server.catalog.map((entry) => entry.tool),
      ...(server.era && { era: server.era }),
    };
    const stored = readCatalog(this.agentDir, fingerprint, server.name);
    if (!stored || !sameCatalog(stored, file))
      await writeAtomically(catalogPath(this.agentDir, fingerprint), `${JSON.stringify(file)}\n`, 0o600);
    return {
      name: server.name,
      catalog: fingerprint,
      tools: server.tools.map((tool) => [tool.piName, tool.tool.name, tool.exposure] as const),
    };
  }

  /** Catalog files no record names, and temporary files of writers that died, are removed (under the index lock). */
  private async removeUnnamed(folder: string, index: IndexFile): Promise<void> {
    const named = new Set(index.starts.flatMap((start) => start.servers.map((server) => `${server.catalog}.json`)));
    const stale = Date.now() - STALE_LOCK_MS;
    for (const name of await readdir(folder)) {
      const path = join(folder, name);
      if (CATALOG_FILE.test(name) && !named.has(name)) await rm(path, { force: true });
      else if (CATALOG_TEMPORARY.test(name) && ((await lstat(path).catch(() => undefined))?.mtimeMs ?? Infinity) < stale)
        await rm(path, { force: true });
    }
  }
}

function sameCatalog(a: CatalogFile, b: CatalogFile): boolean {
  return (
    a.instructions === b.instructions &&
    JSON.stringify(a.counts) === JSON.stringify(b.counts) &&
    JSON.stringify(a.era) === JSON.stringify(b.era) &&
    JSON.stringify(a.tools) === JSON.stringify(b.tools)
  );
}
