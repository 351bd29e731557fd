// Per-server and top-level `roots` through OUR host, against the real
// @modelcontextprotocol/server-filesystem (which replaces the folders on its
// command line with the client's roots) and server-everything (get-roots-list).
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { formatStatus } from "../../src/commands/runtime.ts";
import { ConnectionPool } from "../../src/runtime/pool.ts";
import { createRedactor } from "../../src/safety/text.ts";
import {
  buildConfig,
  everythingStdio,
  packageServer,
  startHost,
  stopAllHosts,
  textOf,
  until,
  type RawDefinition,
  type StartHostOptions,
  type TestHost,
} from "../helpers/host.ts";

const FILESYSTEM = "@modelcontextprotocol/server-filesystem";

let root: string;
/** The folder named on the filesystem server's command line: what it would serve without roots. */
let served: string;
/** Pi's working folder (the project folder). */
let project: string;
beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "pi-mcp-roots-")));
  served = join(root, "served");
  project = join(root, "project");
  await mkdir(join(project, "data"), { recursive: true });
  await mkdir(served);
  await writeFile(join(served, "note.txt"), "from the served folder");
  await writeFile(join(project, "data", "inside.txt"), "from the project's data folder");
});
afterEach(async () => {
  await stopAllHosts();
  await rm(root, { recursive: true, force: true });
});

/** The filesystem server, started for the `served` folder. */
const filesystem = (extra: RawDefinition = {}) => packageServer(FILESYSTEM, [served], extra);

/** Waits until the filesystem server has applied the roots it asked for (it says so on stderr), `count` times in all. */
async function rootsApplied(h: TestHost, name: string, count = 1): Promise<void> {
  const applied = () => h.host.server(name)?.log.text().split("Updated allowed directories from MCP roots").length ?? 0;
  await until(
    () => applied() > count,
    30_000,
    () => `the server applied roots ${applied() - 1} times; log:\n${h.host.server(name)?.log.text()}`,
  );
}

/** A filesystem tool's text, without the labelled copy of its structured content. */
async function fsText(h: TestHost, tool: string, args: Record<string, unknown> = {}): Promise<string> {
  return textOf(await h.call(tool, args)).split("\n[structured content]")[0]!;
}

/** The folders the filesystem server says it may use. */
const allowed = (h: TestHost, name: string) => fsText(h, `mcp__${name}__list_allowed_directories`);

async function startFilesystem(definition: RawDefinition, options: StartHostOptions = {}): Promise<TestHost> {
  const h = await startHost({ fs: definition }, { cwd: project, ...options });
  await h.waitForTools(10, { server: "fs" });
  return h;
}

describe("roots of a server", () => {
  it("without a roots setting, the server gets Pi's working folder (and the folder on its command line is replaced)", async () => {
    const h = await startFilesystem(filesystem());
    await rootsApplied(h, "fs");
    expect(await allowed(h, "fs")).toBe(`Allowed directories:\n${project}`);
    const outcome = await h.call("mcp__fs__read_text_file", { path: join(served, "note.txt") });
    expect(outcome.isError).toBe(true);
    expect(textOf(outcome)).toMatch(/outside allowed directories/i);
  });

  it("a list of folders is sent instead of the working folder: a filesystem server configured for another folder reads there", async () => {
    const h = await startFilesystem(filesystem({ roots: [served] }));
    await rootsApplied(h, "fs");
    expect(await allowed(h, "fs")).toBe(`Allowed directories:\n${served}`);
    expect(await fsText(h, "mcp__fs__read_text_file", { path: join(served, "note.txt") })).toBe("from the served folder");
    expect(h.status("fs").roots).toEqual([served]);
  });

  it("roots: false declares no roots capability: the server keeps the folder on its command line", async () => {
    const h = await startFilesystem(filesystem({ roots: false }));
    // Nothing to wait for from the server: it never asks. Its first answer is what it was started with.
    expect(await allowed(h, "fs")).toBe(`Allowed directories:\n${served}`);
    expect(await fsText(h, "mcp__fs__read_text_file", { path: join(served, "note.txt") })).toBe("from the served folder");
    expect(h.host.server("fs")!.log.text()).not.toContain("from MCP roots");
    expect(h.status("fs").roots).toBe(false);
  });

  it("relative folders resolve against the project folder and ~ is the home folder", async () => {
    const h = await startHost({ everything: everythingStdio({ roots: ["data", "~", "~/pi-mcp-roots-home"] }) }, { cwd: project });
    await h.waitForTools(14, { server: "everything" });
    const listed = textOf(await h.call("mcp__everything__get-roots-list", {}));
    expect(listed).toContain(pathToFileURL(join(project, "data")).href);
    expect(listed).toContain(pathToFileURL(homedir()).href);
    expect(listed).toContain(pathToFileURL(join(homedir(), "pi-mcp-roots-home")).href);
    expect(listed).not.toContain(`${pathToFileURL(project).href}\n`);
  });

  it("the top-level roots are every server's default, and a server's own roots win over them", async () => {
    const h = await startHost(
      { own: filesystem({ roots: [served] }), inherits: filesystem(), declines: filesystem({ roots: false }) },
      { cwd: project, settings: { roots: ["data"] } },
    );
    await h.waitForTools(10, { server: "own" });
    await h.waitForTools(10, { server: "inherits" });
    await h.waitForTools(10, { server: "declines" });
    await rootsApplied(h, "own");
    await rootsApplied(h, "inherits");
    expect(await allowed(h, "own")).toBe(`Allowed directories:\n${served}`);
    expect(await allowed(h, "inherits")).toBe(`Allowed directories:\n${join(project, "data")}`);
    expect(await allowed(h, "declines")).toBe(`Allowed directories:\n${served}`);
    expect(await fsText(h, "mcp__inherits__read_text_file", { path: join(project, "data", "inside.txt") })).toBe(
      "from the project's data folder",
    );
  });

  it("roots: false at the top level declares no roots to any server that does not name its own", async () => {
    const h = await startHost({ everything: everythingStdio() }, { cwd: project, settings: { roots: false } });
    await h.waitForTools(13, { server: "everything" });
    // server-everything adds get-roots-list only for a client that declares roots; its catalog is complete at connect.
    await h.host.flushTools();
    expect([...h.sink.active].filter((name) => name.startsWith("mcp__everything__"))).not.toContain("mcp__everything__get-roots-list");
  });
});

describe("roots in a live session", () => {
  it("new root folders applied in the session are announced with roots/list_changed, without reconnecting", async () => {
    const h = await startFilesystem(filesystem());
    await rootsApplied(h, "fs");
    const pid = h.status("fs").pid;
    const next = buildConfig({ fs: filesystem({ roots: [served] }) });
    await h.host.applyConfig(next, createRedactor(next.secrets));
    await rootsApplied(h, "fs", 2);
    expect(h.status("fs")).toMatchObject({ state: "connected", pid });
    expect(await allowed(h, "fs")).toBe(`Allowed directories:\n${served}`);
    expect(h.host.server("fs")!.log.text()).toContain(`roots changed: ${pathToFileURL(served).href}`);
  });

  it("a change of the top-level roots is announced to the servers that inherit them", async () => {
    const h = await startFilesystem(filesystem(), { settings: { roots: [served] } });
    await rootsApplied(h, "fs");
    const next = buildConfig({ fs: filesystem() }, { settings: { roots: ["data"] } });
    await h.host.applyConfig(next, createRedactor(next.secrets));
    await rootsApplied(h, "fs", 2);
    expect(await allowed(h, "fs")).toBe(`Allowed directories:\n${join(project, "data")}`);
  });

  it("switching roots off changes the client's capabilities, so the server reconnects without roots", async () => {
    const h = await startFilesystem(filesystem({ roots: [join(project, "data")] }));
    await rootsApplied(h, "fs");
    const pid = h.status("fs").pid;
    const next = buildConfig({ fs: filesystem({ roots: false }) });
    await h.host.applyConfig(next, createRedactor(next.secrets));
    await until(() => h.host.server("fs")?.state === "connected" && h.status("fs").pid !== pid, 30_000);
    expect(await allowed(h, "fs")).toBe(`Allowed directories:\n${served}`);
  });

  it("unchanged settings applied again send nothing", async () => {
    const h = await startFilesystem(filesystem({ roots: [served] }));
    await rootsApplied(h, "fs");
    await h.host.applyConfig(h.config, createRedactor(h.config.secrets));
    await h.call("mcp__fs__list_allowed_directories", {}); // a round trip after which a notice would have been handled
    expect(h.host.server("fs")!.log.text()).not.toContain("roots changed");
    expect(h.host.server("fs")!.log.text().split("Updated allowed directories from MCP roots")).toHaveLength(2);
  });

  it("a session that takes a connection over with other roots announces them to the server", async () => {
    const pool = new ConnectionPool();
    const first = await startFilesystem(filesystem({ roots: [served] }), { pool });
    await rootsApplied(first, "fs");
    const pid = first.status("fs").pid;
    await first.host.shutdown(undefined, "replaced");
    const second = await startFilesystem(filesystem({ roots: ["data"] }), { pool });
    expect(second.status("fs")).toMatchObject({ pid, reusedAt: expect.any(Number) });
    // The first session's log went with it: the second counts the server's own line anew.
    await until(() => second.host.server("fs")!.log.text().includes("Updated allowed directories from MCP roots"), 30_000);
    expect(await allowed(second, "fs")).toBe(`Allowed directories:\n${join(project, "data")}`);
    await pool.drain();
  });
});

describe("roots in /mcp status", () => {
  it("shows configured roots under the server, and nothing extra for the default", async () => {
    const h = await startHost(
      { own: everythingStdio({ roots: ["data"] }), none: everythingStdio({ roots: false }), plain: everythingStdio() },
      { cwd: project },
    );
    for (const name of ["own", "none", "plain"]) await h.waitForState(name, "connected");
    const text = formatStatus(h.config, h.host.status());
    expect(text).toContain(`own: connected`);
    expect(text).toMatch(
      new RegExp(`own: connected[^\\n]*\\n  roots: ${join(project, "data").replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}\\n`),
    );
    expect(text).toMatch(/none: connected[^\n]*\n {2}roots: none \(no roots capability\)\n/);
    expect(text).toMatch(/plain: connected[^\n]*(\n|$)(?! {2}roots)/);
  });

  it("a folder that does not exist is sent as configured, and status and the server's log say so; an empty list reads as one", async () => {
    const gone = join(root, "not-made-yet");
    const h = await startHost({ missing: filesystem({ roots: [gone] }), empty: everythingStdio({ roots: [] }) }, { cwd: project });
    for (const name of ["missing", "empty"]) await h.waitForState(name, "connected");
    const text = formatStatus(h.config, h.host.status());
    expect(text).toContain(`missing: connected`);
    expect(text).toContain(`  roots: ${gone} (no such folder)`);
    expect(text).toMatch(/empty: connected[^\n]*\n {2}roots: an empty list \(the roots capability, with no folder\)/);
    expect(h.host.server("missing")!.log.text()).toContain(`[pi-mcp] root ${gone} (no such folder): sent as configured`);
  });
});
