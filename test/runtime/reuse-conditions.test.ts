// A connection handed on between sessions is reused only when the canonical
// project root, the trust state and the timeout settings match (the
// definition and the authentication identity: pool.test.ts, oauth.test.ts).
import { mkdir, mkdtemp, realpath, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConnectionPool } from "../../src/runtime/pool.ts";
import { fixtureServer, startHost, stopAllHosts, type StartHostOptions } from "../helpers/host.ts";
import { fixtureEvents } from "../helpers/servers.ts";

let dir: string;
let pool: ConnectionPool;
beforeEach(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), "pi-mcp-reuse-")));
  pool = new ConnectionPool();
});
afterEach(async () => {
  await stopAllHosts();
  await pool.drain();
  await rm(dir, { recursive: true, force: true });
});

async function folder(name: string): Promise<string> {
  const path = join(dir, name);
  await mkdir(path, { recursive: true });
  return path;
}

/**
 * A session on `first` hands its live connection to the pool; a session on
 * `second` starts with the same server definition. Whether it took the
 * connection over, judged by the server (process starts) and by the host.
 */
async function handOver(first: StartHostOptions, second: StartHostOptions): Promise<boolean> {
  const events = join(dir, `events-${Math.random().toString(36).slice(2)}.jsonl`);
  const servers = { w: fixtureServer("witness", { FIXTURE_EVENTS: events }) };
  const starts = async () => (await fixtureEvents(events)).filter((event) => event.event === "start").length;
  const before = await startHost(servers, { ...first, pool });
  await before.waitForTools(4, { server: "w" });
  const pid = before.status("w").pid;
  await before.host.shutdown(undefined, "replaced");
  expect(pool.size).toBe(1);
  const after = await startHost(servers, { ...second, pool });
  await after.waitForTools(4, { server: "w" });
  const reused = after.status("w").reusedAt !== undefined;
  expect(after.status("w").pid === pid, "the same process exactly when reused").toBe(reused);
  expect(await starts()).toBe(reused ? 1 : 2);
  return reused;
}

describe("project root", () => {
  it("a session in another project folder starts its own server", async () => {
    expect(await handOver({ cwd: await folder("one") }, { cwd: await folder("two") })).toBe(false);
  });

  it("the same folder reached through a symbolic link is the same project: the connection is reused", async () => {
    const project = await folder("project");
    const link = join(dir, "link-to-project");
    await symlink(project, link);
    expect(await handOver({ cwd: project }, { cwd: link })).toBe(true);
  });
});

describe("trust state", () => {
  it("a session whose project trust differs starts its own server, even with an identical definition", async () => {
    const cwd = await folder("project");
    expect(await handOver({ cwd, projectTrusted: false }, { cwd, projectTrusted: true })).toBe(false);
  });

  it("the same trust state reuses the connection", async () => {
    const cwd = await folder("project");
    expect(await handOver({ cwd, projectTrusted: true }, { cwd, projectTrusted: true })).toBe(true);
  });
});

describe("timeouts", () => {
  it("a session whose connect timeout differs starts its own server", async () => {
    const cwd = await folder("project");
    expect(await handOver({ cwd, connectTimeoutMs: 5_000 }, { cwd, connectTimeoutMs: 6_000 })).toBe(false);
  });

  it("a session whose request timeout differs starts its own server", async () => {
    const cwd = await folder("project");
    expect(await handOver({ cwd, requestTimeoutMs: 10_000 }, { cwd, requestTimeoutMs: 20_000 })).toBe(false);
  });

  it("the same timeouts reuse the connection", async () => {
    const cwd = await folder("project");
    expect(
      await handOver(
        { cwd, connectTimeoutMs: 5_000, requestTimeoutMs: 10_000 },
        { cwd, connectTimeoutMs: 5_000, requestTimeoutMs: 10_000 },
      ),
    ).toBe(true);
  });
});
