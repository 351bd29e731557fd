// The one atomic writer (settings, credentials, retained logs, private files) on a
// real full disk (a small tmpfs), with steps that fail, and with writers that are
// killed mid-write (real processes, SIGKILL): the old file is intact, no temporary
// file is left behind, the log writer backs off instead of spinning, and the next
// writer holding the lock removes what a dead writer left.
import { spawn } from "node:child_process";
import { statSync, watch, type FSWatcher } from "node:fs";
import { mkdir, open, readFile, readdir, stat, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { persistLog } from "../../plugins/logging/persist.ts";
import { retainedLogPath } from "../../plugins/logging/index.ts";
import { CredentialStore, bindingFor } from "../../plugins/auth-oauth/store.ts";
import { STALE_LOCK_MS, writeAtomically } from "../../src/config/atomic-file.ts";
import { RetainedLog } from "../../src/runtime/retained-log.ts";
import { writePrivateFile } from "../../src/config/private-files.ts";
import { smallDisk, type SmallDisk } from "../helpers/disk.ts";
import { fixtureServer, startHost, stopAllHosts, until } from "../helpers/host.ts";
import { fileWhere } from "../helpers/wait.ts";
import { REPO_ROOT, createSandbox, nodeBinary, runCli, strayAgentFiles, strayFiles, type Sandbox } from "../helpers/tmp.ts";
import { filesUnder } from "./_shared.ts";

const BINDING = bindingFor("https://docs.example/mcp", undefined, "http://127.0.0.1:19876/mcp/oauth/callback");
const isTemporary = (name: string) => /^\..+\.\d+\.[0-9a-f]{8}\.tmp$/.test(name);

describe("on a full disk", () => {
  let disk: SmallDisk;
  let agentDir: string;
  const env = () => ({ PATH: process.env.PATH, HOME: disk.root, PI_CODING_AGENT_DIR: agentDir });
  beforeEach(async () => {
    disk = await smallDisk();
    agentDir = join(disk.root, "agent");
    await mkdir(agentDir, { recursive: true });
  });
  afterEach(async () => {
    await stopAllHosts();
    await disk.remove();
  });

  it(`add fails with ENOSPC, keeps settings.json byte for byte and leaves no temporary file or lock`, async () => {
    const settings = join(agentDir, "settings.json");
    await writeFile(settings, `${JSON.stringify({ theme: "dark", mcp: { servers: { old: { command: "node" } } } }, null, 2)}\n`);
    const before = await readFile(settings);
    await disk.fill();
    const result = await runCli(["add", "docs", "https://mcp.example.com/mcp"], disk.root, env());
    expect(result.exitCode).toBe(1);
    expect(result.output).toContain("ENOSPC");
    expect((await readFile(settings)).equals(before)).toBe(true);
    expect(await strayAgentFiles(agentDir)).toEqual([]);
    // With room again, the same command works.
    await disk.free();
    expect((await runCli(["add", "docs", "https://mcp.example.com/mcp"], disk.root, env())).exitCode).toBe(0);
    expect(JSON.parse(await readFile(settings, "utf8")).mcp.servers.docs).toEqual({ url: "https://mcp.example.com/mcp" });
  });

  it("a credential write fails and leaves no temporary file holding the token; the store keeps its old content", async () => {
    const store = new CredentialStore(agentDir);
    await store.updateEntry("docs", BINDING, (entry) => {
      entry.scopeHint = "read";
    });
    const before = await readFile(store.path);
    await disk.fill();
    const token = `secret-token-${"t".repeat(64 * 1024)}`;
    await expect(
      store.updateEntry("docs", BINDING, (entry) => {
        entry.tokens = { tokens: { access_token: token, token_type: "Bearer" }, obtainedAt: Date.now() };
      }),
    ).rejects.toMatchObject({
      code: "ENOSPC",
    });
    expect((await readFile(store.path)).equals(before)).toBe(true);
    expect(await strayFiles(agentDir, ["mcp-auth.json"])).toEqual([]);
  });

  it("a private file (spill, saved content) fails whole: nothing is left in its folder", async () => {
    const privateDir = join(disk.root, "session");
    await writePrivateFile(privateDir, "spill", "small.txt", Buffer.from("fits")); // the folder exists, with one file
    await disk.fill();
    await expect(writePrivateFile(privateDir, "spill", "big.txt", Buffer.alloc(256 * 1024, 0x61))).rejects.toMatchObject({
      code: "ENOSPC",
    });
    expect((await readdir(join(privateDir, "spill"))).map((name) => name.replace(/^\d+-[0-9a-f]+-/, ""))).toEqual(["small.txt"]);
  });

  it("the log writer retries a bounded number of times however much the server writes, adds one line to the log, and leaves no temporary file", async () => {
    const path = join(disk.root, "logs", "flood.log");
    await mkdir(join(disk.root, "logs"));
    await disk.fill();
    const attempts = countTemporaries(join(disk.root, "logs"));
    const log = new RetainedLog();
    const delays = [20, 40, 80];
    const reports: string[] = [];
    const report = (line: string) => {
      reports.push(line);
      log.append(line);
    };
    const writer = persistLog(log, path, { render: () => log.text(), report, retryDelaysMs: delays });
    // The server keeps writing (a line every 2 ms): until the writer made its first write and every
    // retry (the temporary files it created say so), then for twice the whole schedule more.
    let lines = 0;
    const serverWrites = async () => {
      log.append(`line ${lines++} ${"x".repeat(2000)}\n`);
      await new Promise((resolve) => setTimeout(resolve, 2));
    };
    const deadline = Date.now() + 30_000;
    while (attempts.count() < 1 + delays.length) {
      if (Date.now() > deadline) throw new Error(`${attempts.count()} write attempts after 30 s`);
      await serverWrites();
    }
    const scheduleEnded = Date.now();
    while (Date.now() - scheduleEnded < 2 * delays.reduce((sum, ms) => sum + ms, 0) || lines <= 100) await serverWrites();
    await writer.finish();
    attempts.stop();
    expect(lines).toBeGreaterThan(100);
    expect(attempts.count()).toBe(1 + delays.length); // the first write and its retries, then nothing
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatch(
      /^\[pi-mcp\] cannot write the retained log file .* \(ENOSPC\); trying again after 0.02 s, 0.04 s, 0.08 s, then keeping the log in memory only/,
    );
    expect(reports[0]).toContain(path);
    expect(await readdir(join(disk.root, "logs"))).toEqual([]);
  });

  it("the log writer recovers when the disk has room again before its retries are used up", async () => {
    const path = join(disk.root, "logs", "server.log");
    await disk.fill();
    const log = new RetainedLog();
    const writer = persistLog(log, path, { render: () => log.text(), report: (line) => log.append(line), retryDelaysMs: [50, 10_000] });
    log.append("first words\n");
    await until(() => log.text().includes("cannot write"), 30_000);
    await disk.free();
    await waitForText(path, "first words", 5_000);
    log.append("later words\n"); // the next write is an ordinary, folded one again
    await writer.finish();
    const text = await readFile(path, "utf8");
    expect(text).toContain("later words");
    expect(text.match(/cannot write/g)).toHaveLength(1);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it("a running host keeps its server connected, notes the failure once in the server's log, and writes the file once there is room", async () => {
    const privateDir = join(disk.root, "session");
    await mkdir(privateDir, { mode: 0o700 });
    const h = await startHost({ talker: fixtureServer("logger") }, { privateDir });
    await h.waitForState("talker", "connected");
    // Only stderr (one line per call), so that no write is under way while the disk fills up.
    await h.call("mcp__talker__say", { text: "before the disk filled", to: "stderr" });
    const file = retainedLogPath(privateDir, "talker");
    await waitForText(file, "before the disk filled", 10_000);
    await disk.fill();
    for (let i = 0; i < 20; i++) await h.call("mcp__talker__say", { text: `while full ${i}`, to: "stderr" });
    const log = h.host.server("talker")!.log;
    await until(() => log.text().includes("cannot write the retained log file"), 30_000);
    expect(h.status("talker").state).toBe("connected");
    await disk.free();
    // The first retry comes 1 s after the failure and writes everything the server said meanwhile.
    await waitForText(file, "while full 19", 10_000);
    expect(log.text().match(/cannot write the retained log file/g)).toHaveLength(1);
    // Once the host has finished its writers, nothing is left beside the log (a check while a retry may be
    // under way could see its temporary file; the unit tests above check the full disk itself).
    await h.host.shutdown();
    expect(await strayFiles(join(privateDir, "logs"), ["talker.log"])).toEqual([]);
  }, 30_000);
});

describe("every failing step of a write removes the temporary file", () => {
  let sandbox: Sandbox;
  beforeEach(async () => {
    sandbox = await createSandbox();
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await sandbox.cleanup();
  });

  it("the rename (the path is a folder): the error is the rename's, nothing is left beside it", async () => {
    const path = join(sandbox.root, "occupied");
    await mkdir(join(path, "inside"), { recursive: true });
    await expect(writeAtomically(path, "text")).rejects.toMatchObject({ syscall: "rename" });
    expect(await strayFiles(sandbox.root, ["agent", "project", "occupied"])).toEqual([]);
  });

  it("the flush (fault-injected fsync: a real disk does not fail on cue): the old file is untouched", async () => {
    const step = "sync";
    const path = join(sandbox.root, "file.json");
    await writeFile(path, "old");
    const probe = await open(join(sandbox.root, ".probe"), "w");
    const prototype = Object.getPrototypeOf(probe);
    await probe.close();
    const original = prototype[step];
    vi.spyOn(prototype, step).mockImplementationOnce(async function (this: unknown) {
      await original.call(this);
      throw Object.assign(new Error(`EIO: i/o error, ${step}`), { code: "EIO", syscall: step });
    });
    await expect(writeAtomically(path, "new")).rejects.toMatchObject({ code: "EIO", syscall: step });
    expect(await readFile(path, "utf8")).toBe("old");
    expect(await strayFiles(sandbox.root, ["agent", "project", "file.json", ".probe"])).toEqual([]);
  });
});

describe("a writer killed mid-write", () => {
  let sandbox: Sandbox;
  beforeEach(async () => {
    sandbox = await createSandbox();
  });
  afterEach(async () => {
    await sandbox.cleanup();
  });

  it("leaves its temporary file and lock; the next add takes the stale lock, removes the temporary file under it and writes", async () => {
    await sandbox.writeJson(sandbox.globalSettings, { theme: "dark" });
    const script = `
      const { updateMcpSettings } = await import(${JSON.stringify(moduleUrl("src/config/files.ts"))});
      await updateMcpSettings(process.argv[2], () => ({ servers: { huge: { command: "node", args: ["x".repeat(64 * 1024 * 1024)] } } }));
    `;
    const left = await killMidWrite(sandbox, script, sandbox.globalSettings);
    expect(await readFile(sandbox.globalSettings, "utf8")).toBe(`${JSON.stringify({ theme: "dark" }, null, 2)}\n`);
    expect((await stat(`${sandbox.globalSettings}.lock`)).isDirectory()).toBe(true);
    // Time passes: the dead writer's lock and temporary file become older than the stale time.
    await age([left, `${sandbox.globalSettings}.lock`], STALE_LOCK_MS + 1_000);

    const result = await runCli(["add", "docs", "https://mcp.example.com/mcp"], sandbox.projectDir, sandbox.env());
    expect(result.exitCode, result.output).toBe(0);
    expect(await sandbox.readJson(sandbox.globalSettings)).toEqual({
      theme: "dark",
      mcp: { servers: { docs: { url: "https://mcp.example.com/mcp" } } },
    });
    expect(await strayAgentFiles(sandbox.agentDir)).toEqual([]);
  }, 60_000);

  it("a temporary file younger than the lock's stale time is kept (its writer may be alive); once older, the next writer removes it", async () => {
    await sandbox.writeJson(sandbox.globalSettings, { theme: "dark" });
    const young = join(sandbox.agentDir, ".settings.json.4242.0badf00d.tmp");
    const unrelated = join(sandbox.agentDir, ".settings.json.notes.tmp"); // not a name pi-mcp writes
    await writeFile(young, "partial");
    await writeFile(unrelated, "mine");
    expect((await runCli(["add", "a", "https://a.example/mcp"], sandbox.projectDir, sandbox.env())).exitCode).toBe(0);
    expect(await strayAgentFiles(sandbox.agentDir)).toEqual([".settings.json.4242.0badf00d.tmp", ".settings.json.notes.tmp"]);
    await age([young, unrelated], STALE_LOCK_MS + 1_000);
    expect((await runCli(["add", "b", "https://b.example/mcp"], sandbox.projectDir, sandbox.env())).exitCode).toBe(0);
    expect(await strayAgentFiles(sandbox.agentDir)).toEqual([".settings.json.notes.tmp"]);
  });

  it("a log writer of a resumed session removes the temporary files of its log file a killed earlier writer left, once older than the stale time", async () => {
    const logs = join(sandbox.root, "session", "logs");
    await mkdir(logs, { recursive: true });
    const path = join(logs, "server.log");
    const dead = join(logs, ".server.log.4242.0badf00d.tmp");
    const young = join(logs, ".server.log.4343.0badf00d.tmp");
    await writeFile(dead, "partial log");
    await writeFile(young, "partial log");
    await age([dead], STALE_LOCK_MS + 1_000);
    const log = new RetainedLog();
    const writer = persistLog(log, path, { render: () => log.text(), report: (line) => log.append(line) });
    log.append("resumed\n");
    await writer.finish();
    expect(await readFile(path, "utf8")).toBe("resumed\n");
    expect((await readdir(logs)).sort()).toEqual([".server.log.4343.0badf00d.tmp", "server.log"]);
  });

  it("logout --all --force removes the credential temporary file it left (holding a PKCE verifier), whatever its age", async () => {
    const script = `
      const { CredentialStore } = await import(${JSON.stringify(moduleUrl("plugins/auth-oauth/store.ts"))});
      const store = new CredentialStore(process.argv[3]);
      const binding = ${JSON.stringify(BINDING)};
      await store.updateEntry("docs", binding, (entry) => {
        entry.pending = { state: "st", codeVerifier: "PKCE-VERIFIER-" + "v".repeat(64 * 1024 * 1024), redirectUri: "http://127.0.0.1:19876/mcp/oauth/callback",
          issuer: "https://docs.example", discovery: { authorizationServerUrl: "https://docs.example" }, startedAt: Date.now() };
      });
    `;
    const store = new CredentialStore(sandbox.agentDir);
    const left = await killMidWrite(sandbox, script, store.path);
    expect(await readFile(left, "utf8").then((text) => text.slice(0, 4096))).toContain("PKCE-VERIFIER-");
    await age([`${store.path}.lock`], STALE_LOCK_MS + 1_000); // only the dead writer's lock has aged; its file is fresh

    const result = await runCli(["logout", "--all", "--force"], sandbox.projectDir, sandbox.env());
    expect(result.exitCode, result.output).toBe(0);
    expect(result.output).toContain("Removed every stored MCP credential");
    expect(await filesUnder(sandbox.agentDir)).toEqual([]);
    expect(await strayFiles(sandbox.agentDir, [])).toEqual([]);
  }, 60_000);
});

/** `file://` URL of a source module, for scripts run by a child Node. */
function moduleUrl(relative: string): string {
  return pathToFileURL(join(REPO_ROOT, relative)).href;
}

/**
 * Runs `script` (argv: the target file, its folder) in a child Node and SIGKILLs it as soon as its
 * temporary file beside `target` holds some bytes; returns that file. A child that finished first
 * is run again.
 */
async function killMidWrite(sandbox: Sandbox, script: string, target: string): Promise<string> {
  const file = join(sandbox.root, "writer.mjs");
  await writeFile(file, script);
  const folder = join(target, "..");
  await mkdir(folder, { recursive: true });
  for (let round = 0; round < 3; round++) {
    const child = spawn(nodeBinary(), ["--experimental-transform-types", "--no-warnings", file, target, folder], {
      cwd: REPO_ROOT,
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const name = `.${target.split("/").pop()}.${child.pid}.`;
    let seen: string | undefined;
    const watcher = watch(folder, (_event, entry) => {
      if (seen || !entry?.startsWith(name)) return;
      const size = statSafe(join(folder, entry));
      if (size === undefined || size === 0) return;
      seen = join(folder, entry);
      child.kill("SIGKILL");
    });
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.on("exit", (c, s) => resolve([c, s])),
    );
    watcher.close();
    if (signal !== "SIGKILL" && code !== 0) throw new Error(`the writer failed: ${stderr}`);
    const left = (await readdir(folder)).filter((entry) => entry.startsWith(name));
    if (signal === "SIGKILL" && left.length === 1) return join(folder, left[0]!);
  }
  throw new Error("the writer finished every time before it could be killed mid-write");
}

function statSafe(path: string): number | undefined {
  try {
    return statSync(path).size;
  } catch {
    return undefined;
  }
}

/** Makes files look `ms` older (as if that much time had passed since their writer last touched them). */
async function age(paths: string[], ms: number): Promise<void> {
  const then = new Date(Date.now() - ms);
  for (const path of paths) await utimes(path, then, then);
}

/** Waits until `path` exists and holds `text` (polled: the writer gives no other sign). */
async function waitForText(path: string, text: string, timeoutMs: number): Promise<void> {
  await fileWhere(path, (content) => content.includes(text), timeoutMs);
}

/** Counts temporary files created in `folder` (each write attempt creates one). */
function countTemporaries(folder: string): { count(): number; stop(): void } {
  const seen = new Set<string>();
  const watcher: FSWatcher = watch(folder, (_event, name) => {
    if (name && isTemporary(name)) seen.add(name);
  });
  return { count: () => seen.size, stop: () => watcher.close() };
}
