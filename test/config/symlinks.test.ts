/**
 * Symbolic links, as dotfiles managers make them: a linked settings.json is
 * written through (the link stays a link, its target gets the change, the
 * temporary file and the rename happen beside the target, and the target is
 * locked too), while the credential store refuses to follow a link at all.
 */
import { lstat, mkdir, readFile, readlink, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import lockfile from "proper-lockfile";
import { afterEach, describe, expect, it } from "vitest";
import { CredentialStore, bindingFor } from "../../plugins/auth-oauth/store.ts";
import { smallDisk, type SmallDisk } from "../helpers/disk.ts";
import { runCli, strayAgentFiles, strayFiles, useSandbox } from "../helpers/tmp.ts";
import { eventually } from "../helpers/wait.ts";

const sandbox = useSandbox();
const DOCS = { url: "https://mcp.example.com/mcp" };

async function add(name = "docs") {
  const box = sandbox();
  return runCli(["add", name, DOCS.url], box.projectDir, box.env());
}

/** A dotfiles folder holding the real settings file, and settings.json as a relative link to it. */
async function linkedSettings(content: unknown = { theme: "dark" }): Promise<{ target: string; dotfiles: string }> {
  const box = sandbox();
  const dotfiles = join(box.root, "dotfiles", "pi");
  await mkdir(dotfiles, { recursive: true });
  const target = join(dotfiles, "settings.json");
  await writeFile(target, `${JSON.stringify(content, null, 2)}\n`);
  await symlink("../dotfiles/pi/settings.json", box.globalSettings);
  return { target, dotfiles };
}

describe("a symbolic link at settings.json", () => {
  it("stays the same link; its target gets the change and keeps its other keys; nothing is left in either folder", async () => {
    const box = sandbox();
    const { target, dotfiles } = await linkedSettings({ theme: "dark", mcp: { servers: { old: { command: "node" } } } });
    const result = await add();
    expect(result.exitCode, result.output).toBe(0);
    expect((await lstat(box.globalSettings)).isSymbolicLink()).toBe(true);
    expect(await readlink(box.globalSettings)).toBe("../dotfiles/pi/settings.json");
    expect(JSON.parse(await readFile(target, "utf8"))).toEqual({
      theme: "dark",
      mcp: { servers: { old: { command: "node" }, docs: DOCS } },
    });
    expect(await strayAgentFiles(box.agentDir)).toEqual([]);
    expect(await strayFiles(dotfiles, ["settings.json"])).toEqual([]);
    // Every later mutation goes through the link too.
    expect((await runCli(["disable", "docs"], box.projectDir, box.env())).exitCode).toBe(0);
    expect((await runCli(["remove", "old"], box.projectDir, box.env())).exitCode).toBe(0);
    expect((await lstat(box.globalSettings)).isSymbolicLink()).toBe(true);
    expect(JSON.parse(await readFile(target, "utf8"))).toEqual({ theme: "dark", mcp: { servers: { docs: { ...DOCS, enabled: false } } } });
  });

  it("replaces the target atomically beside it (a new file), keeping the target's permission bits", async () => {
    const { target } = await linkedSettings();
    const { chmod } = await import("node:fs/promises");
    await chmod(target, 0o640);
    const before = await stat(target);
    expect((await add()).exitCode).toBe(0);
    const after = await stat(target);
    expect(after.ino).not.toBe(before.ino); // renamed over, not rewritten in place
    expect(after.mode & 0o777).toBe(0o640);
  });

  describe("with the target on another filesystem (a tmpfs), where a rename from the link's folder would fail with EXDEV", () => {
    let disk: SmallDisk | undefined;
    afterEach(async () => {
      await disk?.remove();
      disk = undefined;
    });

    it("writes the target", async (context) => {
      const box = sandbox();
      disk = await smallDisk(4 * 1024 * 1024);
      if (disk.kind !== "tmpfs") context.annotate("no tmpfs could be mounted: the target is on the same filesystem as the link");
      const target = join(disk.root, "settings.json");
      await writeFile(target, "{}\n");
      await symlink(target, box.globalSettings);
      const result = await add();
      expect(result.exitCode, result.output).toBe(0);
      expect(JSON.parse(await readFile(target, "utf8"))).toEqual({ mcp: { servers: { docs: DOCS } } });
      expect(await strayFiles(disk.root, ["settings.json"])).toEqual([]);
    });
  });

  it("follows a chain of links to the last one's target", async () => {
    const box = sandbox();
    const { target } = await linkedSettings();
    const middle = join(box.root, "middle.json");
    const { rm } = await import("node:fs/promises");
    await rm(box.globalSettings);
    await symlink(target, middle);
    await symlink(middle, box.globalSettings);
    expect((await add()).exitCode).toBe(0);
    expect((await lstat(middle)).isSymbolicLink()).toBe(true);
    expect((await lstat(box.globalSettings)).isSymbolicLink()).toBe(true);
    expect(JSON.parse(await readFile(target, "utf8")).mcp.servers.docs).toEqual(DOCS);
  });

  it("creates the target of a dangling link (a dotfiles file not written yet), folder and all", async () => {
    const box = sandbox();
    const target = join(box.root, "dotfiles", "new", "settings.json");
    await symlink(target, box.globalSettings);
    expect((await add()).exitCode).toBe(0);
    expect((await lstat(box.globalSettings)).isSymbolicLink()).toBe(true);
    expect(JSON.parse(await readFile(target, "utf8"))).toEqual({ mcp: { servers: { docs: DOCS } } });
  });

  it("is kept out by a holder of the target's lock (a writer reaching the file by another path): after the lock wait it fails, changing nothing", async () => {
    const box = sandbox();
    const { target } = await linkedSettings();
    const release = await lockfile.lock(target, { realpath: false });
    try {
      const pending = add();
      // It takes the link's lock (Pi's) first, then waits for the target's.
      await waitForPath(`${box.globalSettings}.lock`);
      const result = await pending;
      expect(result.exitCode).toBe(1);
      expect(result.output).toContain("is locked by another writer; nothing was changed");
      expect(JSON.parse(await readFile(target, "utf8"))).toEqual({ theme: "dark" });
      expect(await strayAgentFiles(box.agentDir)).toEqual([]); // its own lock is released
    } finally {
      await release();
    }
    expect((await add()).exitCode).toBe(0);
    expect(JSON.parse(await readFile(target, "utf8")).mcp.servers.docs).toEqual(DOCS);
  }, 30_000);

  it("refuses a loop of links with a clear error and changes nothing", async () => {
    const box = sandbox();
    const other = join(box.root, "other.json");
    await symlink(box.globalSettings, other);
    await symlink(other, box.globalSettings);
    const result = await add();
    expect(result.exitCode).toBe(1);
    expect(result.output).toMatch(/ELOOP|symbolic links/);
    expect(await readlink(box.globalSettings)).toBe(other);
  });
});

describe("a symbolic link at mcp-auth.json", () => {
  const binding = bindingFor("https://docs.example/mcp", undefined, "http://127.0.0.1:19876/mcp/oauth/callback");

  it("is refused: reads and writes fail naming the file and the reason, and the link's target is never read or written", async () => {
    const box = sandbox();
    const store = new CredentialStore(box.agentDir);
    const elsewhere = join(box.root, "elsewhere.json");
    const planted = `${JSON.stringify({ version: 1, servers: { docs: { ...binding, tokens: { tokens: { access_token: "planted-token", token_type: "Bearer" }, obtainedAt: 1 } } } })}\n`;
    await writeFile(elsewhere, planted);
    await symlink(elsewhere, store.path);
    await expect(store.entry("docs", binding)).rejects.toThrow(
      `${store.path} is a symbolic link, which pi-mcp does not follow for credentials`,
    );
    await expect(
      store.updateEntry("docs", binding, (entry) => {
        entry.scopeHint = "x";
      }),
    ).rejects.toThrow(/symbolic link/);
    expect(store.identitySync("docs", binding)).toBe("unreadable");
    expect(await store.has("docs", binding)).toBe(false);
    const logout = await runCli(["logout", "docs"], box.projectDir, box.env());
    expect(logout.exitCode).toBe(1);
    expect(logout.output).toContain("symbolic link");
    expect(logout.output).not.toContain("planted-token");
    expect(await readFile(elsewhere, "utf8")).toBe(planted);
    expect((await lstat(store.path)).isSymbolicLink()).toBe(true);
  });

  it("logout --all --force removes the link itself, never the file it points to", async () => {
    const box = sandbox();
    const store = new CredentialStore(box.agentDir);
    const elsewhere = join(box.root, "elsewhere.json");
    await writeFile(elsewhere, "keep me\n");
    await symlink(elsewhere, store.path);
    const result = await runCli(["logout", "--all", "--force"], box.projectDir, box.env());
    expect(result.exitCode, result.output).toBe(0);
    await expect(lstat(store.path)).rejects.toMatchObject({ code: "ENOENT" });
    expect(await readFile(elsewhere, "utf8")).toBe("keep me\n");
  });
});

/** Waits until `path` exists (a writer's lock folder appearing). */
async function waitForPath(path: string, timeoutMs = 15_000): Promise<void> {
  await eventually(
    () =>
      lstat(path).then(
        () => true,
        () => false,
      ),
    timeoutMs,
    () => `${path} never appeared`,
  );
}
