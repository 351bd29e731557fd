// Reading settings files: one parse whose objects have no prototype, and the `mcp` value kept
// between reads only while the file is the same file with the same bytes.
import { mkdir, mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.ts";
import { readMcpSettings, readMcpSettingsSync } from "../../src/config/settings-read.ts";
import { parseJson } from "../../src/safety/keys.ts";

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "pi-mcp-settings-read-"));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("parseJson", () => {
  it("gives every object of the text, however deep and inside arrays, no prototype: __proto__, constructor and toString are own keys", () => {
    const value = parseJson(
      '{"__proto__":{"polluted":true},"constructor":1,"list":[{"toString":"x"},[{"valueOf":2}]],"deep":{"a":{"b":{"c":{}}}}}',
    ) as Record<string, any>;
    const own = Object.getOwnPropertyDescriptor(value, "__proto__")?.value as Record<string, unknown>;
    const objects = [value, own, value.list[0], value.list[1][0], value.deep, value.deep.a, value.deep.a.b, value.deep.a.b.c];
    for (const object of objects) expect(Object.getPrototypeOf(object)).toBeNull();
    expect(Object.keys(value)).toEqual(["__proto__", "constructor", "list", "deep"]);
    expect(own).toEqual({ polluted: true });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(value.constructor).toBe(1);
    expect(value.list[0].toString).toBe("x");
    expect(Array.isArray(value.list[1])).toBe(true);
  });

  it("walks 20,000 levels of nesting without recursion", () => {
    const depth = 20_000;
    let value = parseJson(`${'{"a":['.repeat(depth)}{}${"]}".repeat(depth)}`) as Record<string, unknown>;
    for (let level = 0; level < depth; level++) {
      expect(Object.getPrototypeOf(value)).toBeNull();
      value = (value.a as Record<string, unknown>[])[0]!;
    }
    expect(Object.getPrototypeOf(value)).toBeNull();
  });
});

describe("the mcp value of a settings file", () => {
  const servers = (name: string) => JSON.stringify({ theme: "dark", mcp: { servers: { [name]: { command: "node" } } } });
  const read = async (path: string) => {
    const [sync, async] = [readMcpSettingsSync(path), await readMcpSettings(path)];
    expect(sync).toEqual(async);
    return async.mcpJson === undefined ? async : JSON.parse(async.mcpJson);
  };

  it("is read again after every change: rewritten in place with the same size, replaced by rename, broken, removed", async () => {
    const path = join(root, "settings.json");
    await writeFile(path, servers("aaaa"));
    expect(await read(path)).toEqual({ servers: { aaaa: { command: "node" } } });
    expect(await read(path)).toEqual({ servers: { aaaa: { command: "node" } } });
    // Same size, same inode: only the times tell.
    await writeFile(path, servers("bbbb"));
    expect(await read(path)).toEqual({ servers: { bbbb: { command: "node" } } });
    await writeFile(join(root, "next.json"), servers("cccc"));
    await rename(join(root, "next.json"), path);
    expect(await read(path)).toEqual({ servers: { cccc: { command: "node" } } });
    await writeFile(path, "{ broken");
    expect(await read(path)).toEqual({ exists: true, problem: "is not valid JSON" });
    await writeFile(path, "[1]");
    expect(await read(path)).toEqual({ exists: true, problem: "must contain a JSON object" });
    await writeFile(path, JSON.stringify({ theme: "dark" }));
    expect(await read(path)).toEqual({ exists: true });
    await rm(path);
    expect(await read(path)).toEqual({ exists: false });
  });

  it("gives each load a copy of its own: what one load's resolution does never reaches the next", async () => {
    const agentDir = join(root, "agent");
    await mkdir(agentDir);
    await writeFile(join(agentDir, "settings.json"), servers("one"));
    const first = await loadConfig({ agentDir, cwd: root, projectTrusted: false, env: {} });
    (first.servers[0]!.written as Record<string, unknown>).command = "changed";
    const second = await loadConfig({ agentDir, cwd: root, projectTrusted: false, env: {} });
    expect(second.servers.map((server) => [server.name, server.written.command])).toEqual([["one", "node"]]);
  });
});
