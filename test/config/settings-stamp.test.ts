// The settings stamp decides which recorded catalogs the Pi entry offers before anything is validated:
// it must change with everything that changes what a session would connect to, and not with what does not.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { settingsDigest } from "../../src/config/settings-stamp.ts";

let root: string;
let agentDir: string;
let cwd: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "pi-mcp-stamp-"));
  agentDir = join(root, "agent");
  cwd = join(root, "project");
  await mkdir(agentDir, { recursive: true });
  await mkdir(join(cwd, ".pi"), { recursive: true });
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const env = { PATH: "/usr/bin", HOME: "/home/u", API_TOKEN: "one" };
const stamp = (overrides: Partial<Parameters<typeof settingsDigest>[0]> = {}) =>
  settingsDigest({ agentDir, cwd, trusted: true, env, ...overrides });
const writeGlobal = (mcp: unknown) => writeFile(join(agentDir, "settings.json"), JSON.stringify({ theme: "dark", mcp }));
const writeProject = (mcp: unknown) => writeFile(join(cwd, ".pi", "settings.json"), JSON.stringify({ mcp }));
const remote = { url: "https://mcp.example.test/mcp", auth: { type: "bearer", token: "${API_TOKEN}" } };

function credentials(entry: Record<string, unknown>) {
  return writeFile(
    join(agentDir, "mcp-auth.json"),
    JSON.stringify({
      version: 1,
      servers: { remote: { url: remote.url, client: "dynamic|http://127.0.0.1:19876/mcp/oauth/callback", ...entry } },
    }),
  );
}

describe("the settings stamp", () => {
  it("changes when a server definition changes, and not when a setting outside mcp does", async () => {
    await writeGlobal({ servers: { remote } });
    const before = stamp();
    await writeFile(join(agentDir, "settings.json"), JSON.stringify({ theme: "light", mcp: { servers: { remote } } }));
    expect(stamp()).toBe(before);
    await writeGlobal({ servers: { remote: { ...remote, url: "https://other.example.test/mcp" } } });
    expect(stamp()).not.toBe(before);
  });

  it("changes with the value of a referenced ${NAME} and of an inherited variable, not with an unrelated one", async () => {
    await writeGlobal({ servers: { remote } });
    const before = stamp();
    expect(stamp({ env: { ...env, UNRELATED: "x" } })).toBe(before);
    expect(stamp({ env: { ...env, API_TOKEN: "two" } })).not.toBe(before);
    expect(stamp({ env: { ...env, PATH: "/opt/bin:/usr/bin" } })).not.toBe(before);
  });

  it("reads the project's settings only when the project is trusted, and tells trusted from untrusted", async () => {
    await writeGlobal({ servers: {} });
    await writeProject({ servers: { local: { command: "node", args: ["a.js"] } } });
    const trusted = stamp();
    const untrusted = stamp({ trusted: false });
    expect(untrusted).not.toBe(trusted);
    await writeProject({ servers: { local: { command: "node", args: ["b.js"] } } });
    expect(stamp({ trusted: false })).toBe(untrusted);
    expect(stamp()).not.toBe(trusted);
  });

  it("changes with the stored OAuth identity (logout, a new authorization, another client), not with refreshed tokens", async () => {
    await writeGlobal({ servers: { remote: { url: remote.url } } });
    const none = stamp();
    await credentials({ clientInformation: { client_id: "c1" }, tokens: { access_token: "a1" }, authorizedAt: 1 });
    const authorized = stamp();
    expect(authorized).not.toBe(none);
    await credentials({ clientInformation: { client_id: "c1" }, tokens: { access_token: "a2-refreshed" }, authorizedAt: 1 });
    expect(stamp()).toBe(authorized);
    await credentials({ clientInformation: { client_id: "c1" }, tokens: { access_token: "a3" }, authorizedAt: 2 });
    expect(stamp()).not.toBe(authorized);
    await credentials({ clientInformation: { client_id: "c2" }, tokens: { access_token: "a3" }, authorizedAt: 2 });
    const otherClient = stamp();
    await credentials({ clientInformation: { client_id: "c2" } });
    expect(stamp()).not.toBe(otherClient);
  });

  it("is the same for unreadable settings every time, and differs from valid ones", async () => {
    await writeFile(join(agentDir, "settings.json"), "{ broken");
    const broken = stamp();
    expect(stamp()).toBe(broken);
    await writeGlobal({ servers: {} });
    expect(stamp()).not.toBe(broken);
  });
});
