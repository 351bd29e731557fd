/**
 * The package as a user installs it: `npm pack`'s tarball, laid out in a
 * fresh Pi home the way `pi install npm:pi-mcp` lays out npm packages
 * (test/helpers/package.ts), loaded by a real Pi from there (not from this
 * checkout): its tools register and the offline model calls one, `/mcp list`
 * works, and its `pi-mcp` program runs where npm links it and through npx.
 * In a real Pi TUI (tmux) Pi lists the extension as `pi-mcp`, and after
 * `/reload` the tool rows from before it are drawn as pi-mcp draws new ones.
 */
import { existsSync, readFileSync } from "node:fs";
import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAUX_PROVIDER, makePiHome, NODE, PI_VERSIONS, REPO_ROOT, callThenRepeat, runPi, type PiHome } from "../e2e/harness/pi.ts";
import { freshClone, installPacked, packTarball, tarballFiles, type InstalledPackage } from "../helpers/package.ts";
import { fixturePath } from "../helpers/servers.ts";
import { nodeBinary, projectPath, runProcess } from "../helpers/tmp.ts";
import { startPiTui } from "../helpers/tui.ts";

const MANIFEST = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { version: string };
const PI_RANGE = ">=0.84.2 <1.7.0";
const PEERS = { "@earendil-works/pi-ai": PI_RANGE, "@earendil-works/pi-coding-agent": PI_RANGE, "@earendil-works/pi-tui": PI_RANGE };
/** Where Pi 1.6's TUI shows, at every start, that pi-mcp's /mcp replaced its built-in MCP extension. */
const BUILTIN_ISSUE = "[Extension issues]\n  builtin:mcp\n";
/** Records every module each process of a run resolves (test/e2e/fixtures/resolve-log.mjs). */
const RESOLVE_LOG = join(REPO_ROOT, "test/e2e/fixtures/resolve-log.mjs");
const servers = { basic: { command: NODE, args: [fixturePath("basic")] } };

let tarball: string;
const homes: PiHome[] = [];

beforeAll(async () => {
  tarball = await packTarball();
}, 180_000);

afterAll(async () => {
  await Promise.all(homes.map((home) => home.cleanup()));
});

/** A fresh Pi home with the packed package installed and the basic fixture server configured. */
async function installedHome(): Promise<{ home: PiHome; installed: InstalledPackage; env: Record<string, string> }> {
  const home = await makePiHome();
  homes.push(home);
  const env = { PATH: projectPath(), HOME: home.home, PI_CODING_AGENT_DIR: home.agentDir };
  return { home, installed: await installPacked(tarball, home.agentDir, { mcp: { servers } }), env };
}

/** Runs the installed `pi-mcp` program where npm linked it, in `home`; expects it to succeed. */
async function installedProgram(scene: { home: PiHome; installed: InstalledPackage; env: Record<string, string> }, args: string[]) {
  const result = await runProcess(scene.installed.bins["pi-mcp"]!, args, { cwd: scene.home.cwd, env: scene.env });
  expect(result.code, result.stderr).toBe(0);
  return result;
}

describe("the tarball", () => {
  it("ships the MIT LICENSE, the Pi entry at its root, the sources Pi loads and the built program", () => {
    const files = new Set(tarballFiles(tarball));
    for (const file of [
      "LICENSE",
      "README.md",
      "package.json",
      "index.ts",
      "src/index.ts",
      "src/pi/extension.ts",
      "plugins/observer/pi.ts",
      "cli/commands/list.ts",
      "dist/cli/index.mjs",
      "dist/lib.mjs",
    ]) {
      expect(files.has(file), file).toBe(true);
    }
    expect(files.has("test/helpers/package.ts")).toBe(false);
    expect(readFileSync(join(REPO_ROOT, "LICENSE"), "utf8")).toMatch(/^MIT License\n/);
  });

  it("packed from a fresh clone (no dist yet), it is built first: the tarball holds the program its bin names", async () => {
    const clone = await freshClone();
    try {
      expect(existsSync(join(clone, "dist"))).toBe(false);
      const files = new Set(tarballFiles(await packTarball(clone)));
      for (const file of ["dist/cli/index.mjs", "dist/lib.mjs", "dist/lib.d.mts"]) expect(files.has(file), file).toBe(true);
    } finally {
      await rm(clone, { recursive: true, force: true });
    }
  }, 240_000);

  it("declares Pi's packages it imports as peer dependencies for Pi 0.84.2 through 1.6.x, and its extension at the package root", async () => {
    const { installed } = await installedHome();
    const manifest = JSON.parse(readFileSync(join(installed.dir, "package.json"), "utf8"));
    expect(manifest.license).toBe("MIT");
    expect(manifest.peerDependencies).toEqual(PEERS);
    // Optional for npm: Pi provides them to the extension, and the program never loads them, so
    // `npm install -g pi-mcp` or `npx pi-mcp` does not install a second Pi (npm 7+ installs required peers).
    expect(manifest.peerDependenciesMeta).toEqual(Object.fromEntries(Object.keys(PEERS).map((name) => [name, { optional: true }])));
    expect(manifest.pi).toEqual({ extensions: ["./index.ts"] });
    // Every Pi package the shipped sources import is a declared peer.
    const imported = new Set<string>();
    for (const file of tarballFiles(tarball).filter((name) => /\.(ts|mjs)$/.test(name))) {
      for (const match of readFileSync(join(installed.dir, file), "utf8").matchAll(/from ["'](@earendil-works\/[^/"']+)/g))
        imported.add(match[1]!);
    }
    expect([...imported].sort()).toEqual(Object.keys(manifest.peerDependencies).sort());
  });
});

describe.each(PI_VERSIONS)("installed into a fresh Pi %s home", (version) => {
  it("Pi loads it from the installed package: its tools register, the model calls one, and /mcp list works", async () => {
    const { home } = await installedHome();
    const run = await runPi({
      version,
      home: home.home,
      cwd: home.cwd,
      args: ["-p", "/mcp wait", "/mcp list", "echo it"],
      script: callThenRepeat("mcp__basic__echo", { text: "from the tarball" }),
      timeoutMs: 90_000,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^basic: connected, 3 tools/m);
    expect(run.stdout).toMatch(/^basic\s+global\s+enabled\s+stdio\s+none/m);
    expect(run.stdout).toContain("model saw: from the tarball");
    const offered = run.requests[0]!.tools.map((tool) => tool.name);
    expect(offered).toEqual(expect.arrayContaining(["mcp__basic__echo", "mcp__basic__add", "mcp__basic__env"]));
  });
});

describe("its pi-mcp program", () => {
  it("runs where npm links it, and through npx --prefix", async () => {
    const scene = await installedHome();
    const { home, installed, env } = scene;
    expect((await installedProgram(scene, ["--version"])).stdout).toBe(`${MANIFEST.version}\n`);
    const list = await installedProgram(scene, ["list", "--json"]);
    expect(JSON.parse(list.stdout).servers).toEqual([expect.objectContaining({ name: "basic", transport: "stdio" })]);
    const npx = await runProcess("npx", ["--offline", "--prefix", installed.root, "pi-mcp", "test", "basic"], {
      cwd: home.cwd,
      env,
      timeoutMs: 60_000,
    });
    expect(npx.code, npx.stderr).toBe(0);
    expect(npx.stdout).toMatch(/^✓ basic: fixture-basic/);
    // The same program file runs under the Node that runs the tests too.
    const direct = await runProcess(nodeBinary(), [join(installed.dir, "dist/cli/index.mjs"), "--version"], { cwd: home.cwd, env });
    expect(direct.stdout).toBe(`${MANIFEST.version}\n`);
  });
});

describe("its settings check", () => {
  it("recorded by the installed pi-mcp program, spares the installed extension's first start in Pi the check: no arktype is loaded", async () => {
    const scene = await installedHome();
    const { home } = scene;
    await installedProgram(scene, ["list"]);
    const log = join(home.home, "resolved");
    const run = await runPi({
      home: home.home,
      cwd: home.cwd,
      args: ["-p", "/mcp wait", "echo it"],
      script: callThenRepeat("mcp__basic__echo", { text: "checked before" }),
      env: { NODE_OPTIONS: `--import=${pathToFileURL(RESOLVE_LOG).href}`, PI_MCP_RESOLVE_LOG: log },
      timeoutMs: 90_000,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("model saw: checked before");
    const files = (await readdir(home.home)).filter((name) => name.startsWith("resolved."));
    const resolved = (await Promise.all(files.map((name) => readFile(join(home.home, name), "utf8")))).join("\n");
    // The watch saw the packages pi-mcp loads natively (Pi's loader runs its own modules), and no arktype among them.
    expect(resolved).toContain("/node_modules/@modelcontextprotocol/client/");
    expect(resolved).not.toMatch(/\/node_modules\/arktype\//);
  });
});

describe("in a real Pi TUI", () => {
  it("Pi lists the extension as pi-mcp; after /reload the earlier tool rows are drawn as pi-mcp draws rows; after the installed pi-mcp setup Pi starts without the built-in MCP warning", async () => {
    const { home, installed } = await installedHome();
    const script = join(home.home, "faux-script.json");
    await writeFile(
      script,
      JSON.stringify([{ toolCall: { name: "mcp__basic__echo", arguments: { text: "before reload" } } }, { text: "done one" }]),
    );
    const pi = await startPiTui({
      home,
      args: ["-e", FAUX_PROVIDER, "--provider", "faux", "--model", "faux-1"],
      env: { PI_MCP_FAUX_SCRIPT: script, PI_MCP_FAUX_LOG: join(home.home, "faux-log.jsonl") },
    });
    try {
      // Pi's compact start-up list names each extension by its label: `pi-mcp`, never `src` or `pi-mcp:src`.
      const start = await pi.waitFor(
        "the list of loaded extensions",
        (shown) => /^\[Extensions\]\n {2}\S/m.test(shown) && shown.includes("MCP 1/1"),
        { timeoutMs: 60_000 },
      );
      const labels = /^\[Extensions\]\n {2}(.+)$/m.exec(start)![1]!.split(", ");
      expect(labels.sort()).toEqual(["faux-provider.ts", "pi-mcp"]);
      expect(start).toContain(BUILTIN_ISSUE);

      await pi.submit("please echo");
      const row = 'MCP basic › echo  text="before reload"';
      let shown = await pi.waitFor("the echo row", (text) => text.includes("done one"));
      expect(shown).toContain(row);

      await pi.submit("/reload");
      shown = await pi.waitFor("the reload to finish", (text) => text.includes("Reloaded") && text.includes("MCP 1/1"), {
        timeoutMs: 60_000,
      });
      // The row from before the reload, drawn by pi-mcp again (not Pi's default `mcp__basic__echo {…}`).
      shown = await pi.waitFor("the earlier row drawn by pi-mcp", (text) => text.includes(row));
      expect(shown).toMatch(/✓ success · 1 text/);
      expect(shown).not.toContain("mcp__basic__echo");

      // A row whose server is gone since keeps pi-mcp's look too (its server and tool come from the stored result).
      await writeFile(join(home.agentDir, "settings.json"), JSON.stringify({ packages: ["npm:pi-mcp"] }));
      // A notice is no session entry: the rebuilt transcript of the next reload no longer has it.
      await pi.submit("/mcp list");
      await pi.waitFor("the list without the server", (text) => text.includes("No MCP servers are configured."));
      await pi.submit("/reload");
      shown = await pi.waitFor(
        "the second reload",
        (text) => text.includes("Reloaded") && !text.includes("No MCP servers are configured."),
        { timeoutMs: 60_000 },
      );
      shown = await pi.waitFor("the row of the removed server", (text) => text.includes(row));
      expect(shown).toMatch(/✓ success · 1 text/);
      expect(shown).not.toContain("mcp__basic__echo");
    } finally {
      await pi.stop();
    }

    // The installed program's setup turns Pi's built-in MCP off: the next start has no warning about it.
    const env = { PATH: projectPath(), HOME: home.home, PI_CODING_AGENT_DIR: home.agentDir };
    const setup = await runProcess(installed.bins["pi-mcp"]!, ["setup"], { cwd: home.cwd, env, timeoutMs: 60_000 });
    expect(setup.code, setup.stderr).toBe(0);
    // A server again, so that its footer says the host has started (after Pi's start-up warnings).
    expect(
      (
        await runProcess(installed.bins["pi-mcp"]!, ["add", "basic", "--", servers.basic.command, ...servers.basic.args], {
          cwd: home.cwd,
          env,
        })
      ).code,
    ).toBe(0);
    const again = await startPiTui({
      home,
      args: ["-e", FAUX_PROVIDER, "--provider", "faux", "--model", "faux-1"],
      env: { PI_MCP_FAUX_SCRIPT: script },
    });
    try {
      const shown = await again.waitFor("the second start", (text) => /^\[Extensions\]\n {2}\S/m.test(text) && text.includes("MCP 1/1"), {
        timeoutMs: 60_000,
      });
      expect(/^\[Extensions\]\n {2}(.+)$/m.exec(shown)![1]!.split(", ").sort()).toEqual(["faux-provider.ts", "pi-mcp"]);
      expect(again.history()).not.toContain("[Extension issues]");
      expect(again.history()).not.toContain("builtin:mcp");
    } finally {
      await again.stop();
    }
  }, 120_000);
});
