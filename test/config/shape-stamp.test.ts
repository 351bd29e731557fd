// The shape check's memory (src/config/shape-stamp.ts): settings that passed the shape check are not
// checked again, and arktype is not loaded for them, until their text, pi-mcp or the check changes.
// Loads run in fresh Node processes whose module resolution is watched: whether arktype was loaded is
// what the process resolved, not what the test believes.
import { spawnSync } from "node:child_process";
import { lstat, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, expect, it } from "vitest";
import { shapeStampPath } from "../../src/config/shape-stamp.ts";
import { nodeBinary, piMcpInHome, REPO_ROOT } from "../helpers/tmp.ts";

let root: string;
let agentDir: string;
let cwd: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "pi-mcp-shape-"));
  agentDir = join(root, "agent");
  cwd = join(root, "project");
  await Promise.all([mkdir(agentDir, { recursive: true }), mkdir(join(cwd, ".pi"), { recursive: true })]);
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Loads the settings as a session start does, in a fresh process, and tells what it found and whether arktype was loaded. */
const PROBE = `
import { registerHooks } from "node:module";
const resolved = [];
registerHooks({ resolve(specifier, context, next) { const result = next(specifier, context); resolved.push(result.url); return result; } });
const { loadConfig } = await import(process.env.LOAD);
const config = await loadConfig({ agentDir: process.env.AGENT, cwd: process.env.CWD, projectTrusted: true, env: { TOKEN: "t0ken" } });
process.stdout.write(JSON.stringify({
  valid: config.valid,
  issues: config.issues,
  servers: config.servers.map((server) => [server.name, server.scope, server.enabled, server.transport, server.definition === undefined]),
  arktype: resolved.some((url) => url.includes("/node_modules/arktype/")),
}));
`;

interface Loaded {
  readonly valid: boolean;
  readonly issues: readonly { path: string; message: string; file: string }[];
  readonly servers: readonly unknown[];
  readonly arktype: boolean;
}

function load(): Loaded {
  const run = spawnSync(nodeBinary(), ["--no-warnings", "--input-type=module", "-e", PROBE], {
    cwd,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: root,
      LOAD: pathToFileURL(join(REPO_ROOT, "src/config/load.ts")).href,
      AGENT: agentDir,
      CWD: cwd,
    },
    encoding: "utf8",
    timeout: 60_000,
  });
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as Loaded;
}

const globalFile = () => join(agentDir, "settings.json");
const projectFile = () => join(cwd, ".pi", "settings.json");
const writeSettings = (file: string, mcp: unknown) => writeFile(file, `${JSON.stringify({ theme: "dark", mcp }, null, 2)}\n`);

const GLOBAL = {
  connectTimeoutMs: 5000,
  servers: {
    files: { command: "node", args: ["files.js"], environment: { KEY: "${TOKEN}" } },
    remote: { url: "https://mcp.example.test/mcp", auth: { type: "bearer", token: "${TOKEN}" } },
  },
};
const PROJECT = { servers: { local: { command: "node", args: ["local.js"], exposure: "deferred" } } };

it("settings that passed the shape check load again without arktype, with the same result; a changed text is checked again in full", async () => {
  await writeSettings(globalFile(), GLOBAL);
  await writeSettings(projectFile(), PROJECT);
  expect(await stat(shapeStampPath(agentDir)).catch(() => undefined)).toBeUndefined();

  const first = load();
  expect(first.valid).toBe(true);
  expect(first.arktype).toBe(true);
  const stamp = await lstat(shapeStampPath(agentDir));
  expect(stamp.isFile()).toBe(true);
  expect(stamp.mode & 0o777).toBe(0o600);
  // Keyed hashes only: nothing of the settings, not even a server's name or a variable's.
  const text = await readFile(shapeStampPath(agentDir), "utf8");
  for (const written of ["files", "remote", "local", "TOKEN", "example", "node"]) expect(text).not.toContain(written);

  const second = load();
  expect(second.arktype).toBe(false);
  expect(second).toEqual({ ...first, arktype: false });

  // Other keys of settings.json are not the MCP settings: no new check for them.
  await writeFile(globalFile(), `${JSON.stringify({ theme: "light", mcp: GLOBAL }, null, 2)}\n`);
  expect(load().arktype).toBe(false);

  // One field more in the project's servers: that text was never checked; it is, and its problem reported.
  await writeSettings(projectFile(), { servers: { local: { ...PROJECT.servers.local, colour: "red" } } });
  const changed = load();
  expect(changed.arktype).toBe(true);
  expect(changed.valid).toBe(false);
  expect(changed.issues).toEqual([{ path: "mcp.servers.local.colour", message: "unknown field", file: projectFile() }]);
});

it("settings written by pi-mcp load at the next start without arktype: the text written was checked whole; a hand-written problem still is not remembered", async () => {
  await writeSettings(globalFile(), GLOBAL);
  const cli = (argv: string[]) => piMcpInHome({ home: root, agentDir, cwd }, argv);
  expect((await cli(["add", "added", "--", "node", "added.js"])).code).toBe(0);
  const added = load();
  expect(added.arktype).toBe(false);
  expect(added.servers).toContainEqual(["added", "global", true, "stdio", false]);

  // A problem written by hand beside them is never remembered by a later write (remove, as add, disable, ...): it is still reported.
  const current = JSON.parse(await readFile(globalFile(), "utf8")) as { mcp: { servers: Record<string, unknown> } };
  await writeSettings(globalFile(), { ...current.mcp, servers: { ...current.mcp.servers, odd: { command: "node", colour: "red" } } });
  expect((await cli(["remove", "added"])).code).toBe(0);
  const odd = load();
  expect(odd.arktype).toBe(true);
  expect(odd.servers).not.toContainEqual(expect.arrayContaining(["added"]));
  expect(odd.issues).toContainEqual({ path: "mcp.servers.odd.colour", message: "unknown field", file: globalFile() });
});

it("a text with a problem is never remembered: every load checks it and reports the same problems", async () => {
  await writeSettings(globalFile(), { servers: { a: { command: "node", connectTimeoutMs: -1, exposure: "sometimes" } } });
  const first = load();
  expect(first.valid).toBe(false);
  expect(first.arktype).toBe(true);
  expect(await stat(shapeStampPath(agentDir)).catch(() => undefined)).toBeUndefined();
  const second = load();
  expect(second).toEqual(first);
  expect(first.issues.map((issue) => issue.path)).toEqual(["mcp.servers.a.connectTimeoutMs", "mcp.servers.a.exposure"]);
});

it("a problem arktype does not see (a rule between fields, an unset variable) is reported at every load, remembered shape or not", async () => {
  await writeSettings(globalFile(), {
    servers: { both: { command: "node", url: "https://a.example.test/mcp" }, env: { command: "${UNSET_X}" } },
  });
  const first = load();
  const second = load();
  expect(first.arktype).toBe(true);
  expect(second.arktype).toBe(false);
  expect(second.valid).toBe(false);
  expect(second.issues).toEqual(first.issues);
  expect(second.issues.length).toBeGreaterThanOrEqual(2);
});

it("a broken, foreign or linked record counts as none: the settings are checked, and the record is replaced by one of ours", async () => {
  await writeSettings(globalFile(), GLOBAL);
  const path = shapeStampPath(agentDir);
  await mkdir(join(agentDir, "pi-mcp"), { recursive: true });

  for (const content of ["{ not json", JSON.stringify({ format: 99, salt: "a".repeat(64), passed: [] }), JSON.stringify([1, 2, 3])]) {
    await writeFile(path, content);
    const loaded = load();
    expect(loaded.arktype).toBe(true);
    expect(loaded.valid).toBe(true);
    expect(JSON.parse(await readFile(path, "utf8"))).toMatchObject({ format: 1, passed: [expect.stringMatching(/^[0-9a-f]{64}$/)] });
  }

  // Keys of another salt (another agent folder's record copied here) name nothing.
  const other = JSON.parse(await readFile(path, "utf8")) as { passed: string[] };
  await writeFile(path, JSON.stringify({ format: 1, salt: "b".repeat(64), passed: other.passed }));
  expect(load().arktype).toBe(true);

  // A link where the record belongs is not read through; it is replaced, and what it pointed at is left as it was.
  const elsewhere = join(root, "elsewhere.json");
  await writeFile(elsewhere, await readFile(path, "utf8"));
  const before = await readFile(elsewhere, "utf8");
  await rm(path);
  await symlink(elsewhere, path);
  expect(load().arktype).toBe(true);
  expect((await lstat(path)).isSymbolicLink()).toBe(false);
  expect(await readFile(elsewhere, "utf8")).toBe(before);
  expect(load().arktype).toBe(false);
});

it("the core a session loads reaches arktype only through the shape check's own import", () => {
  const probe = `
import { registerHooks } from "node:module";
const resolved = [];
registerHooks({ resolve(specifier, context, next) { const result = next(specifier, context); resolved.push(result.url); return result; } });
await import(process.env.CORE);
process.stdout.write(JSON.stringify(resolved.filter((url) => url.includes("/node_modules/arktype/") || url.endsWith("/src/config/schema.ts"))));
`;
  // The core has parameter properties, which Node's type stripping alone refuses.
  const run = spawnSync(nodeBinary(), ["--no-warnings", "--experimental-transform-types", "--input-type=module", "-e", probe], {
    cwd,
    env: { PATH: process.env.PATH ?? "", HOME: root, CORE: pathToFileURL(join(REPO_ROOT, "src/pi/extension.ts")).href },
    encoding: "utf8",
    timeout: 60_000,
  });
  expect(run.status, run.stderr).toBe(0);
  expect(JSON.parse(run.stdout)).toEqual([]);
});
