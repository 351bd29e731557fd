// Two concurrent sessions in one process (Pi's SDK) never share a client: each gets its own server process.
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAgentSession, DefaultResourceLoader, SessionManager, SettingsManager } from "@earendil-works/pi-coding-agent";
import { afterEach, expect, it } from "vitest";
import piMcp from "../../src/index.ts";
import { until } from "../helpers/host.ts";
import { NODE, removeHome, REPO_ROOT } from "./harness/pi.ts";

let root: string | undefined;
const saved = process.env.PI_CODING_AGENT_DIR;
afterEach(async () => {
  process.env.PI_CODING_AGENT_DIR = saved;
  if (root) await removeHome(root);
});

it("gives two live sessions of one process two server processes", async () => {
  root = await mkdtemp(join(tmpdir(), "pi-mcp-sdk-"));
  const agentDir = join(root, "agent");
  const cwd = join(root, "project");
  await mkdir(agentDir, { recursive: true });
  await mkdir(cwd, { recursive: true });
  process.env.PI_CODING_AGENT_DIR = agentDir;
  const startLog = join(root, "starts.log");
  const fixture = join(REPO_ROOT, "test/fixtures/servers/crash.mjs");
  await writeFile(
    join(agentDir, "settings.json"),
    JSON.stringify({ mcp: { servers: { one: { command: NODE, args: [fixture], environment: { FIXTURE_START_LOG: startLog } } } } }),
  );

  const open = async () => {
    const resourceLoader = new DefaultResourceLoader({ cwd, agentDir, extensionFactories: [piMcp] });
    await resourceLoader.reload();
    const { session } = await createAgentSession({
      cwd,
      agentDir,
      resourceLoader,
      settingsManager: SettingsManager.create(cwd, agentDir),
      sessionManager: SessionManager.inMemory(),
    });
    await session.bindExtensions({});
    return session;
  };
  const first = await open();
  const second = await open();
  try {
    const hasTools = (session: typeof first) => session.getActiveToolNames().includes("mcp__one__ok");
    await until(() => hasTools(first) && hasTools(second), 15_000);
    const pids = (await readFile(startLog, "utf8")).split("\n").filter(Boolean);
    expect(new Set(pids).size).toBe(2);
  } finally {
    first.dispose();
    second.dispose();
  }
}, 60_000);
