/**
 * `-l` / `--local` needs Pi's saved trust in `<agentDir>/trust.json`
 * (`{ "<absolute canonical dir>": true }`, nearest ancestor wins); the CLI's
 * `--approve`/`-a` and `--no-approve`/`-na` override it for one run.
 */
import { existsSync } from "node:fs";
import { mkdir, symlink } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { savedProjectTrust } from "../../src/config/trust.ts";
import { runCli, useSandbox } from "../helpers/tmp.ts";

const sandbox = useSandbox();

async function cliIn(cwd: string, ...argv: string[]) {
  return runCli(argv, cwd, sandbox().env());
}

async function addLocal(cwd: string, ...flags: string[]) {
  return cliIn(cwd, "add", "-l", ...flags, "p", "--", "node", "p.mjs");
}

const projectFile = (cwd: string) => join(cwd, ".pi", "settings.json");

describe("-l requires saved project trust", () => {
  it("fails with exit 1 and a reason when trust.json does not exist, creating no project file", async () => {
    const box = sandbox();
    const result = await addLocal(box.projectDir);
    expect(result.exitCode).toBe(1);
    expect(result.output).toMatch(/trust/);
    expect(result.output).toContain("--approve");
    expect(existsSync(box.projectSettings)).toBe(false);
    expect(existsSync(box.globalSettings)).toBe(false);
  });

  it("succeeds when trust.json saves true for the project folder", async () => {
    const box = sandbox();
    await box.trust({ [box.projectDir]: true });
    const result = await addLocal(box.projectDir);
    expect(result.exitCode).toBe(0);
    expect(result.output).toContain(box.projectSettings);
    expect(await box.readJson(box.projectSettings)).toEqual({ mcp: { servers: { p: { command: "node", args: ["p.mjs"] } } } });
    expect(existsSync(box.globalSettings)).toBe(false);
  });

  it("fails when trust.json saves false for the project folder", async () => {
    const box = sandbox();
    await box.trust({ [box.projectDir]: false });
    expect((await addLocal(box.projectDir)).exitCode).toBe(1);
    expect(existsSync(box.projectSettings)).toBe(false);
  });

  it("fails when trust.json trusts only another folder", async () => {
    const box = sandbox();
    await box.trust({ [join(box.root, "elsewhere")]: true });
    expect((await addLocal(box.projectDir)).exitCode).toBe(1);
  });

  it("fails when trust.json is malformed (treated as no saved decision)", async () => {
    const box = sandbox();
    await box.writeText(join(box.agentDir, "trust.json"), "{ nope");
    expect((await addLocal(box.projectDir)).exitCode).toBe(1);
  });

  it("every mutation needs it: remove -l, enable -l and disable -l fail without trust", async () => {
    const box = sandbox();
    await box.writeJson(box.projectSettings, { mcp: { servers: { p: { command: "node" } } } });
    const before = await box.readText(box.projectSettings);
    for (const argv of [
      ["remove", "-l", "p"],
      ["enable", "-l", "p"],
      ["disable", "--local", "p"],
    ]) {
      expect((await cliIn(box.projectDir, ...argv)).exitCode, argv.join(" ")).toBe(1);
    }
    expect(await box.readText(box.projectSettings)).toBe(before);
  });

  it("--local is the long form of -l", async () => {
    const box = sandbox();
    await box.trust({ [box.projectDir]: true });
    expect((await cliIn(box.projectDir, "add", "--local", "p", "https://x.example.com/mcp")).exitCode).toBe(0);
    expect(existsSync(box.projectSettings)).toBe(true);
  });
});

describe("the nearest saved ancestor decides", () => {
  it("trust saved for an ancestor folder covers a project below it", async () => {
    const box = sandbox();
    const deep = join(box.projectDir, "packages", "app");
    await mkdir(deep, { recursive: true });
    await box.trust({ [box.root]: true });
    expect(savedProjectTrust(box.agentDir, deep)).toBe(true);
    expect((await addLocal(deep)).exitCode).toBe(0);
    expect(existsSync(projectFile(deep))).toBe(true);
  });

  it("a nearer false beats a farther true", async () => {
    const box = sandbox();
    const deep = join(box.projectDir, "packages", "app");
    await mkdir(deep, { recursive: true });
    await box.trust({ [box.root]: true, [box.projectDir]: false });
    expect(savedProjectTrust(box.agentDir, deep)).toBe(false);
    expect((await addLocal(deep)).exitCode).toBe(1);
  });

  it("a nearer true beats a farther false", async () => {
    const box = sandbox();
    const deep = join(box.projectDir, "packages", "app");
    await mkdir(deep, { recursive: true });
    await box.trust({ [box.root]: false, [box.projectDir]: true });
    expect(savedProjectTrust(box.agentDir, deep)).toBe(true);
    expect((await addLocal(deep)).exitCode).toBe(0);
  });

  it("no saved decision anywhere is null", async () => {
    const box = sandbox();
    expect(savedProjectTrust(box.agentDir, box.projectDir)).toBeNull();
    await box.trust({});
    expect(savedProjectTrust(box.agentDir, box.projectDir)).toBeNull();
  });

  it("trust is looked up by canonical path: a symlinked checkout shares the real folder's decision", async () => {
    const box = sandbox();
    const link = join(box.root, "link-to-project");
    await symlink(box.projectDir, link, "dir");
    await box.trust({ [box.projectDir]: true });
    expect(savedProjectTrust(box.agentDir, link)).toBe(true);
    expect((await addLocal(link)).exitCode).toBe(0);
    expect(await box.readJson(box.projectSettings)).toMatchObject({ mcp: { servers: { p: { command: "node" } } } });
  });

  it("a decision saved under the symlink's own path (not canonical) does not count", async () => {
    const box = sandbox();
    const link = join(box.root, "link-to-project");
    await symlink(box.projectDir, link, "dir");
    await box.trust({ [link]: true });
    expect(savedProjectTrust(box.agentDir, link)).toBeNull();
  });
});

describe("the CLI's trust overrides", () => {
  it.each([["--approve"], ["-a"]])("%s allows -l without saved trust", async (flag) => {
    const box = sandbox();
    const result = await addLocal(box.projectDir, flag);
    expect(result.exitCode).toBe(0);
    expect(existsSync(box.projectSettings)).toBe(true);
  });

  it.each([["--approve"], ["-a"]])("%s overrides a saved false", async (flag) => {
    const box = sandbox();
    await box.trust({ [box.projectDir]: false });
    expect((await addLocal(box.projectDir, flag)).exitCode).toBe(0);
  });

  it.each([["--no-approve"], ["-na"]])("%s refuses -l despite saved trust", async (flag) => {
    const box = sandbox();
    await box.trust({ [box.projectDir]: true });
    const result = await addLocal(box.projectDir, flag);
    expect(result.exitCode).toBe(1);
    expect(existsSync(box.projectSettings)).toBe(false);
  });

  it("--approve makes list read the project settings; --no-approve hides them despite saved trust", async () => {
    const box = sandbox();
    await box.writeJson(box.projectSettings, { mcp: { servers: { p: { command: "node" } } } });
    const names = async (...argv: string[]) =>
      ((await cliIn(box.projectDir, "list", "--json", ...argv)).json as { servers: { name: string }[] }).servers.map(
        (server) => server.name,
      );
    expect(await names()).toEqual([]);
    expect(await names("--approve")).toEqual(["p"]);
    await box.trust({ [box.projectDir]: true });
    expect(await names()).toEqual(["p"]);
    expect(await names("-na")).toEqual([]);
  });

  it("-a bundled with -l (-la), which the parser accepts, is honoured or refused, never silently ignored", async () => {
    const box = sandbox();
    const result = await cliIn(box.projectDir, "add", "-la", "p", "--", "node");
    // 0: the bundled -a approved the project; 2: bundling is refused as a usage error.
    // Not 1 ("needs saved trust ... or pass --approve") when --approve was in fact passed.
    expect([0, 2], result.output).toContain(result.exitCode);
  });

  it("an -a after -- belongs to the local server's command line and grants nothing", async () => {
    const box = sandbox();
    const result = await cliIn(box.projectDir, "add", "-l", "p", "--", "node", "-a");
    expect(result.exitCode).toBe(1);
    expect(existsSync(box.projectSettings)).toBe(false);
  });

  it("an override lasts for one invocation only and is never saved", async () => {
    const box = sandbox();
    expect((await addLocal(box.projectDir, "-a")).exitCode).toBe(0);
    expect(existsSync(join(box.agentDir, "trust.json"))).toBe(false);
    expect((await cliIn(box.projectDir, "remove", "-l", "p")).exitCode).toBe(1);
  });
});
