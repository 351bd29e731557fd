// The persisted catalogs on disk (src/runtime/catalog-store.ts writes, catalog-cache.ts reads): a private
// folder of private files, keyed hashes instead of anything resolved, and every file that is not exactly
// what we write (broken, foreign, linked, too open, another fingerprint) ignored and then written anew.
import { chmod, lstat, mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Tool } from "@modelcontextprotocol/client";
import { catalogFolder, indexPath, readCachedStart } from "../../src/runtime/catalog-cache.ts";
import { CatalogStore, type StartSnapshot } from "../../src/runtime/catalog-store.ts";

let agent: string;
beforeEach(async () => {
  agent = await mkdtemp(join(tmpdir(), "pi-mcp-catalogs-"));
});
afterEach(async () => {
  await rm(agent, { recursive: true, force: true });
});

const SECRET_DIGEST = "digest-of-settings-holding-token-s3cr3t-value";

function snapshot(digest: string, tools: readonly string[], identity = "identity-with-resolved-s3cr3t-value"): StartSnapshot {
  const catalog = tools.map((name) => {
    const tool: Tool = { name, description: `does ${name}`, inputSchema: { type: "object", properties: { text: { type: "string" } } } };
    return { tool, json: JSON.stringify(tool) };
  });
  return {
    digest,
    complete: true,
    prompt: "\n\n## MCP servers\nsrv: use it.",
    servers: [
      {
        name: "srv",
        identity,
        catalog,
        tools: catalog.map((entry) => ({ piName: `mcp__srv__${entry.tool.name}`, exposure: "direct" as const, ...entry })),
        instructions: "use it.",
        counts: { tools: catalog.length },
      },
    ],
  };
}

const catalogFiles = async () => (await readdir(catalogFolder(agent))).filter((name) => name !== "index.json");

describe("the catalog store", () => {
  it("keeps its files 0600 in a 0700 folder, and stores neither the settings digest nor the catalog identity in the clear", async () => {
    await new CatalogStore(agent).save(snapshot(SECRET_DIGEST, ["ping"]));
    expect((await lstat(catalogFolder(agent))).mode & 0o777).toBe(0o700);
    const names = await readdir(catalogFolder(agent));
    expect(names.sort()).toEqual([...(await catalogFiles()), "index.json"].sort());
    expect(await catalogFiles()).toHaveLength(1);
    for (const name of names) {
      expect((await lstat(join(catalogFolder(agent), name))).mode & 0o777, name).toBe(0o600);
      const text = await readFile(join(catalogFolder(agent), name), "utf8");
      expect(text).not.toContain("s3cr3t");
    }
  });

  it("narrows a folder others can read to 0700 before it writes", async () => {
    await mkdir(catalogFolder(agent), { recursive: true, mode: 0o755 });
    await chmod(catalogFolder(agent), 0o755);
    await new CatalogStore(agent).save(snapshot("d", ["ping"]));
    expect((await lstat(catalogFolder(agent))).mode & 0o777).toBe(0o700);
  });

  it("finds the tools of a recorded start again by its settings digest, and nothing for another digest", async () => {
    await new CatalogStore(agent).save(snapshot("d1", ["ping", "pong"]));
    const start = readCachedStart(agent, ["other", "d1"]);
    expect(start?.servers.map((server) => [server.name, server.tools.map((tool) => tool.piName)])).toEqual([
      ["srv", ["mcp__srv__ping", "mcp__srv__pong"]],
    ]);
    expect(start?.prompt).toBe("\n\n## MCP servers\nsrv: use it.");
    expect(start!.servers[0]!.matches("identity-with-resolved-s3cr3t-value")).toBe(true);
    expect(start!.servers[0]!.matches("another identity")).toBe(false);
    expect(readCachedStart(agent, ["other"])).toBeUndefined();
  });

  it("keeps the records of other settings beside a new one, and removes a catalog no record names any more", async () => {
    const store = new CatalogStore(agent);
    await store.save(snapshot("a", ["one"], "identity-a"));
    await store.save(snapshot("b", ["two"], "identity-b"));
    expect(readCachedStart(agent, ["a"])!.servers[0]!.tools.map((tool) => tool.tool.name)).toEqual(["one"]);
    expect(readCachedStart(agent, ["b"])!.servers[0]!.tools.map((tool) => tool.tool.name)).toEqual(["two"]);
    // Settings "a" now see another catalog: the old one is named by no record and goes.
    await store.save(snapshot("a", ["three"], "identity-c"));
    expect(await catalogFiles()).toHaveLength(2);
    expect(readCachedStart(agent, ["a"])!.servers[0]!.tools.map((tool) => tool.tool.name)).toEqual(["three"]);
  });

  it("keeps a catalog per server: two servers whose definitions are identical apart from their names (one catalog identity) both find theirs again", async () => {
    const one = snapshot("d", ["ping"], "the-same-identity").servers[0]!;
    const two = snapshot("d", ["pong"], "the-same-identity").servers[0]!;
    const renamed = { ...two, name: "twin", tools: two.tools.map((tool) => ({ ...tool, piName: `mcp__twin__${tool.tool.name}` })) };
    await new CatalogStore(agent).save({ digest: "d", servers: [one, renamed], complete: true });
    expect(await catalogFiles()).toHaveLength(2);
    const start = readCachedStart(agent, ["d"]);
    expect(start?.servers.map((server) => [server.name, server.tools.map((tool) => tool.piName)])).toEqual([
      ["srv", ["mcp__srv__ping"]],
      ["twin", ["mcp__twin__pong"]],
    ]);
    for (const server of start?.servers ?? []) expect(server.matches("the-same-identity"), server.name).toBe(true);
  });

  it("keeps a server's era verdict with its catalog, and writes the catalog again when the verdict changes", async () => {
    const store = new CatalogStore(agent);
    await store.save(snapshot("d", ["ping"]));
    expect(readCachedStart(agent, ["d"])!.servers[0]!.era).toBeUndefined();
    const withEra = (at: number): StartSnapshot => {
      const base = snapshot("d", ["ping"]);
      return { ...base, servers: base.servers.map((server) => ({ ...server, era: { kind: "legacy" as const, at } })) };
    };
    await store.save(withEra(1_000));
    expect(readCachedStart(agent, ["d"])!.servers[0]!.era).toEqual({ kind: "legacy", at: 1_000 });
    await store.save(withEra(2_000));
    expect(readCachedStart(agent, ["d"])!.servers[0]!.era).toEqual({ kind: "legacy", at: 2_000 });
  });

  it("says whether a record covers every server the first request would wait for", async () => {
    const store = new CatalogStore(agent);
    await store.save(snapshot("whole", ["ping"]));
    await store.save({ ...snapshot("partial", ["pong"], "identity-partial"), complete: false });
    expect(readCachedStart(agent, ["whole"])?.complete).toBe(true);
    expect(readCachedStart(agent, ["partial"])?.complete).toBe(false);
  });

  it("twenty writers at once lose no record (locked read-modify-write, atomic replace)", async () => {
    await Promise.all(Array.from({ length: 20 }, (_, i) => new CatalogStore(agent).save(snapshot(`d${i}`, [`tool${i}`], `identity-${i}`))));
    for (let i = 0; i < 20; i++) expect(readCachedStart(agent, [`d${i}`])!.servers[0]!.tools[0]!.tool.name, `record ${i}`).toBe(`tool${i}`);
    expect((await readdir(catalogFolder(agent))).filter((name) => name.endsWith(".tmp") || name.endsWith(".lock"))).toEqual([]);
  });
});

describe("a cache that is not exactly ours", () => {
  const damages: Array<[string, () => Promise<void>]> = [
    ["broken JSON in the index", () => writeFile(indexPath(agent), "{ not json")],
    [
      "an index of another format",
      async () =>
        writeFile(indexPath(agent), JSON.stringify({ ...JSON.parse(await readFile(indexPath(agent), "utf8")), format: "someone-else" })),
    ],
    ["an index others can read", () => chmod(indexPath(agent), 0o644)],
    ["a folder others can read", () => chmod(catalogFolder(agent), 0o755)],
    [
      "a truncated catalog",
      async () => {
        const file = join(catalogFolder(agent), (await catalogFiles())[0]!);
        await writeFile(file, (await readFile(file, "utf8")).slice(0, 50));
      },
    ],
    [
      "a catalog that claims another fingerprint",
      async () => {
        const file = join(catalogFolder(agent), (await catalogFiles())[0]!);
        const data = JSON.parse(await readFile(file, "utf8"));
        await writeFile(file, JSON.stringify({ ...data, catalog: "0".repeat(64) }));
      },
    ],
    [
      "a catalog whose tool has no name",
      async () => {
        const file = join(catalogFolder(agent), (await catalogFiles())[0]!);
        const data = JSON.parse(await readFile(file, "utf8"));
        await writeFile(file, JSON.stringify({ ...data, tools: [{ description: "nameless" }] }));
      },
    ],
    [
      "a catalog with an era verdict we do not write",
      async () => {
        const file = join(catalogFolder(agent), (await catalogFiles())[0]!);
        const data = JSON.parse(await readFile(file, "utf8"));
        await writeFile(file, JSON.stringify({ ...data, era: { kind: "modern", at: 1 } }));
      },
    ],
    [
      "a catalog replaced by a link",
      async () => {
        const file = join(catalogFolder(agent), (await catalogFiles())[0]!);
        const elsewhere = join(agent, "elsewhere.json");
        await writeFile(elsewhere, await readFile(file, "utf8"), { mode: 0o600 });
        await rm(file);
        await symlink(elsewhere, file);
      },
    ],
  ];

  it.each(damages)("%s offers nothing, and the next save writes a cache that is found again", async (_damage, damage) => {
    const store = new CatalogStore(agent);
    await store.save(snapshot("d", ["ping"]));
    expect(readCachedStart(agent, ["d"])).toBeDefined();
    await damage();
    expect(readCachedStart(agent, ["d"])).toBeUndefined();
    await store.save(snapshot("d", ["ping"]));
    expect(readCachedStart(agent, ["d"])!.servers[0]!.tools.map((tool) => tool.piName)).toEqual(["mcp__srv__ping"]);
  });
});
