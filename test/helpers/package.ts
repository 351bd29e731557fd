/**
 * The npm package as users get it: `npm pack`'s tarball, laid out in a fresh
 * Pi home the way `pi install npm:pi-mcp` lays out npm packages (Pi 1.6,
 * dist/core/package-manager.js: `npm install <spec> --prefix <agentDir>/npm
 * --legacy-peer-deps` in a private "pi-extensions" project, the package
 * named in the global settings' `packages` as `npm:<name>`).
 *
 * npm cannot resolve the dependencies offline, so they come from this
 * checkout's node_modules, linked flat beside the package as npm hoists them:
 * exactly the closure of the package's `dependencies` (and its dependencies'
 * required peers), never a development dependency and never one of Pi's own
 * packages (`--legacy-peer-deps`: Pi provides them). A file the tarball
 * lacks, or an import of a package it does not declare, fails to load.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { chmod, copyFile, mkdir, mkdtemp, realpath, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { REPO_ROOT, projectPath } from "./tmp.ts";

interface Manifest {
  readonly name: string;
  readonly version: string;
  readonly bin?: Record<string, string>;
  readonly dependencies?: Record<string, string>;
  readonly optionalDependencies?: Record<string, string>;
  readonly peerDependencies?: Record<string, string>;
  readonly peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

const readManifest = (dir: string): Manifest => JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Manifest;

/**
 * Runs `npm pack` in `dir` (its `files`, as published): the tarball's path.
 * In the checkout its `prepack` build is skipped (`--ignore-scripts`): other
 * tests run the built program meanwhile, and unbuild starts by emptying `dist`.
 */
export async function packTarball(dir = REPO_ROOT): Promise<string> {
  const destination = await mkdtemp(join(tmpdir(), "pi-mcp-pack-"));
  const scripts = dir === REPO_ROOT ? ["--ignore-scripts"] : [];
  const output = execFileSync("npm", ["pack", "--json", ...scripts, "--pack-destination", destination], {
    cwd: dir,
    env: { ...process.env, PATH: projectPath() },
    encoding: "utf8",
    timeout: 180_000,
  });
  // A lifecycle script's own output (the prepack build's) comes first on the same stream; npm's document is the last.
  const [packed] = JSON.parse(output.slice(output.search(/^\[$/m))) as { filename: string }[];
  return join(destination, packed!.filename);
}

/**
 * A fresh clone of the checkout: the files git tracks (as they are in the
 * working tree), without `dist`, with the checkout's node_modules linked in
 * (as `npm ci` would have installed them).
 */
export async function freshClone(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "pi-mcp-clone-"));
  const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: REPO_ROOT, encoding: "utf8" })
    .split("\0")
    .filter(Boolean);
  for (const file of files) {
    if (!existsSync(join(REPO_ROOT, file))) continue; // deleted in the working tree
    await mkdir(dirname(join(dir, file)), { recursive: true });
    await copyFile(join(REPO_ROOT, file), join(dir, file));
  }
  await symlink(await realpath(join(REPO_ROOT, "node_modules")), join(dir, "node_modules"), "dir");
  return dir;
}

/** The files a tarball holds (without npm's `package/` prefix). */
export function tarballFiles(tarball: string): string[] {
  return execFileSync("tar", ["-tzf", tarball], { encoding: "utf8" })
    .split("\n")
    .filter(Boolean)
    .map((entry) => entry.replace(/^package\//, ""));
}

/** Node's lookup of package `name` from `fromDir` upwards: the folder it loads. */
function resolvePackage(name: string, fromDir: string): string {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", name);
    if (existsSync(join(candidate, "package.json"))) return candidate;
    if (dirname(dir) === dir) throw new Error(`${name} (needed from ${fromDir}) is not installed in this checkout`);
  }
}

/** Every package the installed package needs at run time, by name, with the folder it comes from. */
function runtimeClosure(manifest: Manifest): Map<string, string> {
  const found = new Map<string, string>();
  const visit = (dependent: Manifest, from: string) => {
    const required = Object.keys(dependent.peerDependencies ?? {}).filter((name) => !dependent.peerDependenciesMeta?.[name]?.optional);
    for (const name of [...Object.keys(dependent.dependencies ?? {}), ...Object.keys(dependent.optionalDependencies ?? {}), ...required]) {
      if (name.startsWith("@earendil-works/") || found.has(name)) continue; // Pi's own packages come from Pi
      let dir: string;
      try {
        dir = resolvePackage(name, from);
      } catch (error) {
        if (dependent.optionalDependencies?.[name]) continue; // an optional dependency npm did not install here
        throw error;
      }
      found.set(name, dir);
      visit(readManifest(dir), dir);
    }
  };
  visit(manifest, REPO_ROOT);
  return found;
}

export interface InstalledPackage {
  /** `<agentDir>/npm`, the root of Pi's npm installs. */
  readonly root: string;
  /** `<root>/node_modules/<name>`. */
  readonly dir: string;
  /** `<root>/node_modules/.bin/<bin name>`, as npm links it. */
  readonly bins: Readonly<Record<string, string>>;
}

/** Installs `tarball` into `agentDir` as `pi install npm:<name>` would, and names it in the global settings' `packages`. */
export async function installPacked(tarball: string, agentDir: string, settings: Record<string, unknown> = {}): Promise<InstalledPackage> {
  const root = join(agentDir, "npm");
  const modules = join(root, "node_modules");
  await mkdir(modules, { recursive: true });
  await writeFile(join(root, "package.json"), JSON.stringify({ name: "pi-extensions", private: true }, null, 2));
  const staging = await mkdtemp(join(tmpdir(), "pi-mcp-unpack-"));
  execFileSync("tar", ["-xzf", tarball, "-C", staging]);
  const manifest = readManifest(join(staging, "package"));
  const dir = join(modules, manifest.name);
  await mkdir(dirname(dir), { recursive: true });
  execFileSync("mv", [join(staging, "package"), dir]);
  // Only what npm hoists to the top: a nested copy comes along inside its parent's folder.
  for (const [name, from] of runtimeClosure(manifest)) {
    if (from !== join(REPO_ROOT, "node_modules", name)) continue;
    await mkdir(dirname(join(modules, name)), { recursive: true });
    await symlink(await realpath(from), join(modules, name), "dir");
  }
  const bins: Record<string, string> = {};
  await mkdir(join(modules, ".bin"), { recursive: true });
  for (const [name, target] of Object.entries(manifest.bin ?? {})) {
    bins[name] = join(modules, ".bin", name);
    await symlink(join("..", manifest.name, target), bins[name]);
    await chmod(join(dir, target), 0o755);
  }
  await writeFile(join(agentDir, "settings.json"), JSON.stringify({ ...settings, packages: [`npm:${manifest.name}`] }, null, 2));
  return { root, dir, bins };
}

/** The keys of one server in `pi-mcp list --json`, sorted: the documented contract (README), nothing more. */
export const LIST_JSON_SERVER_KEYS = [
  "auth",
  "definitionTokens",
  "enabled",
  "exposure",
  "masked",
  "name",
  "scope",
  "storedAuth",
  "transport",
];
