/**
 * Writing settings: only `mcp` changes, other keys and their order survive, a
 * missing file is created with only `mcp`, `${VAR}` is stored as written,
 * malformed files are never overwritten, the lock is honoured, and two real
 * processes writing at once lose nothing.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { chmod, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { changeServers } from "../../src/config/mutate.ts";
import { updateMcpSettings } from "../../src/config/files.ts";
import { nodeBinary, REPO_ROOT, runCli, runWhileLocked, strayAgentFiles, useSandbox } from "../helpers/tmp.ts";

const sandbox = useSandbox();

async function cli(argv: string[], extraEnv: Record<string, string> = {}) {
  const box = sandbox();
  return runCli(argv, box.projectDir, box.env(extraEnv));
}

const OTHER_KEYS = {
  $schema: "https://example.com/pi-settings.schema.json",
  theme: "dark",
  defaultModel: { provider: "faux", id: "m-1" },
  packages: ["npm:pi-something", { source: "git:github.com/x/y", extensions: ["a.ts"] }],
  emptyObject: {},
  nothing: null,
  flag: false,
  count: 3.5,
  unicode: "naïve ✓ \u2028",
};

describe("a mutation changes only the mcp object", () => {
  it("add keeps every other key, their values and their order, and mcp's own other fields", async () => {
    const box = sandbox();
    const before = {
      ...OTHER_KEYS,
      mcp: { connectTimeoutMs: 1_234, retry: { maxRetries: 4 }, servers: { old: { command: "node", args: ["o.mjs"] } } },
      zLast: ["stays", "last"],
    };
    await box.writeJson(box.globalSettings, before);
    const result = await cli(["add", "docs", "https://mcp.example.com/mcp"]);
    expect(result.exitCode).toBe(0);
    const after = (await box.readJson(box.globalSettings)) as Record<string, unknown>;
    expect(Object.keys(after)).toEqual(Object.keys(before));
    expect(after).toEqual({
      ...before,
      mcp: { ...before.mcp, servers: { old: { command: "node", args: ["o.mjs"] }, docs: { url: "https://mcp.example.com/mcp" } } },
    });
  });

  it("remove, enable and disable keep every other key and their order too", async () => {
    const box = sandbox();
    const before = { first: 1, mcp: { servers: { a: { command: "node" }, b: { command: "node" } } }, ...OTHER_KEYS };
    await box.writeJson(box.globalSettings, before);
    expect((await cli(["disable", "a"])).exitCode).toBe(0);
    expect((await cli(["enable", "a"])).exitCode).toBe(0);
    expect((await cli(["remove", "b"])).exitCode).toBe(0);
    const after = (await box.readJson(box.globalSettings)) as Record<string, unknown>;
    expect(Object.keys(after)).toEqual(Object.keys(before));
    expect(after).toEqual({ ...before, mcp: { servers: { a: { command: "node" } } } });
  });

  it("updateMcpSettings removing the mcp key keeps the rest of the file", async () => {
    const box = sandbox();
    await box.writeJson(box.globalSettings, { a: 1, mcp: { servers: {} }, b: 2 });
    await updateMcpSettings(box.globalSettings, () => undefined);
    expect(await box.readJson(box.globalSettings)).toEqual({ a: 1, b: 2 });
  });

  it("keeps the file's permission bits", async () => {
    const box = sandbox();
    await box.writeJson(box.globalSettings, { theme: "dark" });
    await chmod(box.globalSettings, 0o600);
    expect((await cli(["add", "docs", "https://mcp.example.com/mcp"])).exitCode).toBe(0);
    expect((await stat(box.globalSettings)).mode & 0o777).toBe(0o600);
  });

  it("leaves no temporary file or lock behind", async () => {
    const box = sandbox();
    await box.writeJson(box.globalSettings, { theme: "dark" });
    expect((await cli(["add", "docs", "https://mcp.example.com/mcp"])).exitCode).toBe(0);
    expect(await strayAgentFiles(box.agentDir)).toEqual([]);
  });
});

describe("a missing file", () => {
  it("is created holding only mcp", async () => {
    const box = sandbox();
    const result = await cli(["add", "docs", "--", "node", "docs.mjs"]);
    expect(result.exitCode).toBe(0);
    expect(await box.readJson(box.globalSettings)).toEqual({ mcp: { servers: { docs: { command: "node", args: ["docs.mjs"] } } } });
  });

  it("is created, with its folder, in a project that has no .pi folder yet (-l)", async () => {
    const box = sandbox();
    await box.trust({ [box.projectDir]: true });
    const result = await cli(["add", "-l", "docs", "https://mcp.example.com/mcp"]);
    expect(result.exitCode).toBe(0);
    expect(await box.readJson(box.projectSettings)).toEqual({ mcp: { servers: { docs: { url: "https://mcp.example.com/mcp" } } } });
  });

  it("is created when the agent folder itself does not exist yet", async () => {
    const box = sandbox();
    const agent = join(box.root, "fresh-agent");
    const argv = ["add", "docs", "https://mcp.example.com/mcp"];
    const result = await runCli(argv, box.projectDir, box.env({ PI_CODING_AGENT_DIR: agent }));
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(await readFile(join(agent, "settings.json"), "utf8"))).toEqual({
      mcp: { servers: { docs: { url: "https://mcp.example.com/mcp" } } },
    });
  });
});

describe("expansion never happens on write", () => {
  it("add stores ${VAR} exactly as written even when the variables are set", async () => {
    const box = sandbox();
    const env = { HOST: "resolved-host.example.com", TOKEN: "resolved-token", WS: "resolved-ws" };
    const result = await cli(
      ["add", "docs", "https://${HOST}/mcp", "--header", "X-Workspace=${WS}", "--auth", "bearer", "--token", "${TOKEN}"],
      env,
    );
    expect(result.exitCode).toBe(0);
    const text = await box.readText(box.globalSettings);
    for (const value of Object.values(env)) expect(text).not.toContain(value);
    expect(JSON.parse(text)).toEqual({
      mcp: {
        servers: {
          docs: { url: "https://${HOST}/mcp", headers: { "X-Workspace": "${WS}" }, auth: { type: "bearer", token: "${TOKEN}" } },
        },
      },
    });
  });

  it("add of a local server stores ${VAR} in args, cwd and environment as written", async () => {
    const box = sandbox();
    const result = await cli(["add", "loc", "--cwd", "${ROOT}", "--env", "KEY=${KEY}", "--", "${CMD}", "${ARG}"], {
      ROOT: "/resolved",
      KEY: "resolved-key",
      CMD: "resolved-cmd",
      ARG: "resolved-arg",
    });
    expect(result.exitCode).toBe(0);
    expect(await box.readJson(box.globalSettings)).toEqual({
      mcp: { servers: { loc: { command: "${CMD}", args: ["${ARG}"], cwd: "${ROOT}", environment: { KEY: "${KEY}" } } } },
    });
  });

  it("disable and disable -l (which load the expanded config) still write the unexpanded text", async () => {
    const box = sandbox();
    const definition = { url: "https://${HOST}/mcp", headers: { "X-Key": "${KEY}" } };
    await box.writeJson(box.globalSettings, { mcp: { servers: { docs: definition, other: definition } } });
    await box.trust({ [box.projectDir]: true });
    const env = { HOST: "resolved-host.example.com", KEY: "resolved-key" };
    expect((await cli(["disable", "docs"], env)).exitCode).toBe(0);
    expect((await cli(["disable", "-l", "other"], env)).exitCode).toBe(0);
    expect(await box.readJson(box.globalSettings)).toEqual({
      mcp: { servers: { docs: { ...definition, enabled: false }, other: definition } },
    });
    expect(await box.readJson(box.projectSettings)).toEqual({ mcp: { servers: { other: { enabled: false } } } });
  });
});

describe("a settings file that is not a JSON object is never overwritten", () => {
  const MALFORMED: [string, string, RegExp][] = [
    ["invalid JSON", '{\n  "theme": "dark",\n  "mcp": { "servers": { \n', /not valid JSON/],
    ["a JSON array", '[{ "mcp": { "servers": {} } }]\n', /JSON object/],
    ["a JSON string", '"just a string"', /JSON object/],
  ];

  it.each(MALFORMED)("%s: every mutation fails with exit 1 and a message, leaving the bytes untouched", async (_, text, reason) => {
    const box = sandbox();
    await box.writeText(box.globalSettings, text);
    const original = await readFile(box.globalSettings);
    for (const argv of [
      ["add", "docs", "https://mcp.example.com/mcp"],
      ["add", "loc", "--", "node"],
      ["remove", "docs"],
      ["enable", "docs"],
      ["disable", "docs"],
    ]) {
      const result = await cli(argv);
      expect(result.exitCode, argv.join(" ")).toBe(1);
      expect(result.output).toMatch(reason);
      expect(result.output).toContain(box.globalSettings);
      expect(result.output.split("\n")).toHaveLength(1);
      expect((await readFile(box.globalSettings)).equals(original)).toBe(true);
    }
    expect(await strayAgentFiles(box.agentDir)).toEqual([]);
  });

  it("a malformed project file is left untouched by add -l", async () => {
    const box = sandbox();
    await box.trust({ [box.projectDir]: true });
    await box.writeText(box.projectSettings, "{ broken");
    const original = await readFile(box.projectSettings);
    const result = await cli(["add", "-l", "docs", "https://mcp.example.com/mcp"]);
    expect(result.exitCode).toBe(1);
    expect(result.output).toMatch(/not valid JSON/);
    expect((await readFile(box.projectSettings)).equals(original)).toBe(true);
  });

  it("list reports the malformed file as invalid settings with exit 0", async () => {
    const box = sandbox();
    await box.writeText(box.globalSettings, "{ broken");
    const result = await cli(["list", "--json"]);
    expect(result.exitCode).toBe(0);
    expect(result.json).toMatchObject({ valid: false, servers: [], errors: [{ path: "mcp" }] });
  });
});

describe("the settings lock", () => {
  it("a mutation waits for another holder of <file>.lock and then writes", async () => {
    const box = sandbox();
    await box.writeJson(box.globalSettings, { theme: "dark" });
    // It finds the lock taken and tries again: it waits, and has written nothing.
    const result = await runWhileLocked(
      box.globalSettings,
      () => cli(["add", "docs", "https://mcp.example.com/mcp"]),
      async () => expect(await box.readJson(box.globalSettings)).toEqual({ theme: "dark" }),
    );
    expect(result.exitCode).toBe(0);
    expect(await box.readJson(box.globalSettings)).toEqual({
      theme: "dark",
      mcp: { servers: { docs: { url: "https://mcp.example.com/mcp" } } },
    });
  });
});

/** A writer process: waits for "go" on stdin, then adds `count` servers at once (each change takes the lock). */
const WRITER = `
const [mutate, file, prefix, count] = process.argv.slice(2);
const { changeServers } = await import(mutate);
process.stdout.write("ready\\n");
await new Promise((resolve) => process.stdin.once("data", resolve));
await Promise.all(
  Array.from({ length: Number(count) }, (_, i) =>
    changeServers({ scope: "global", file }, (servers) => {
      servers[prefix + "-" + i] = { url: "http://127.0.0.1:9/" + prefix + "/" + i };
    }),
  ),
);
process.stdout.write("done\\n");
process.exit(0);
`;

function startWriter(
  script: string,
  file: string,
  prefix: string,
  count: number,
): { child: ChildProcess; ready: Promise<void>; exit: Promise<number | null>; stderr: () => string } {
  const mutate = pathToFileURL(join(REPO_ROOT, "src/config/mutate.ts")).href;
  const child = spawn(nodeBinary(), ["--no-warnings", script, mutate, file, prefix, String(count)], {
    cwd: REPO_ROOT,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      if (chunk.includes("ready")) resolve();
    });
    child.on("exit", () => reject(new Error(`writer ${prefix} exited before it was ready: ${stderr}`)));
  });
  const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, ready, exit, stderr: () => stderr };
}

describe("lock contention between two real processes", () => {
  it("two processes each adding 20 servers at once lose nothing, and the file is valid JSON at every read", async () => {
    const box = sandbox();
    await box.writeJson(box.globalSettings, { theme: "dark", mcp: { requestTimeoutMs: 5_000 } });
    const script = join(box.root, "writer.mjs");
    await box.writeText(script, WRITER);
    const writers = [startWriter(script, box.globalSettings, "alpha", 20), startWriter(script, box.globalSettings, "beta", 20)];
    await Promise.all(writers.map((writer) => writer.ready));
    for (const writer of writers) writer.child.stdin!.end("go\n");

    let running = true;
    const exits = Promise.all(writers.map((writer) => writer.exit)).finally(() => (running = false));
    let reads = 0;
    const bad: string[] = [];
    while (running) {
      const text = await readFile(box.globalSettings, "utf8");
      try {
        const parsed = JSON.parse(text) as { theme?: string };
        if (parsed.theme !== "dark") bad.push(`lost theme: ${text.slice(0, 80)}`);
      } catch {
        bad.push(`invalid JSON: ${text.slice(0, 80)}`);
      }
      reads++;
    }
    const codes = await exits;
    expect(codes, writers.map((writer) => writer.stderr()).join("\n")).toEqual([0, 0]);
    expect(bad).toEqual([]);
    expect(reads).toBeGreaterThan(10);

    const final = (await box.readJson(box.globalSettings)) as {
      theme: string;
      mcp: { requestTimeoutMs: number; servers: Record<string, unknown> };
    };
    const expected = ["alpha", "beta"].flatMap((prefix) => Array.from({ length: 20 }, (_, i) => `${prefix}-${i}`)).sort();
    expect(Object.keys(final.mcp.servers).sort()).toEqual(expected);
    // The writers really ran at the same time: their additions interleave in the file.
    const owners = Object.keys(final.mcp.servers).map((name) => name.split("-")[0]);
    const switches = owners.filter((owner, index) => index > 0 && owner !== owners[index - 1]).length;
    expect(switches, owners.join(" ")).toBeGreaterThan(1);
    expect(final.theme).toBe("dark");
    expect(final.mcp.requestTimeoutMs).toBe(5_000);
    expect(await strayAgentFiles(box.agentDir)).toEqual([]);
  });

  it("concurrent changeServers calls inside one process also lose nothing", async () => {
    const box = sandbox();
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        changeServers({ scope: "global", file: box.globalSettings, agentDir: box.agentDir }, (servers) => {
          servers[`s${i}`] = { command: "node" };
        }),
      ),
    );
    const final = (await box.readJson(box.globalSettings)) as { mcp: { servers: Record<string, unknown> } };
    expect(Object.keys(final.mcp.servers).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `s${i}`).sort());
  });
});
