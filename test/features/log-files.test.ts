// The retained-log files on disk hold exactly what `/mcp logs` shows: secrets resolved
// from settings are redacted and terminal controls removed, before the file is
// written, also for secrets that arrive with a later settings change.
import { readFile, readdir } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { retainedLogPath } from "../../plugins/logging/index.ts";
import { runCommandLine } from "../../src/commands/index.ts";
import { REDACTED, createRedactor } from "../../src/safety/text.ts";
import { buildConfig, fixtureServer, piEnvironment, startHost, stopAllHosts, type TestHost } from "../helpers/host.ts";
import { fileWhere } from "../helpers/wait.ts";

afterEach(stopAllHosts);

const SECRET = "s3cret-token-value-42";
const LATER_SECRET = "later-secret-value-77";
const env = { ...process.env, LOG_TEST_SECRET: SECRET, LOG_TEST_LATER: LATER_SECRET };

async function logsShown(h: TestHost, server: string): Promise<string> {
  const result = await runCommandLine([...h.host.kernelInstance.commands], ["logs", server], piEnvironment(h));
  expect(result.exitCode).toBe(0);
  return result.output;
}

/** The log file's text once it holds `text` (the writer folds writes for 50 ms and gives no other sign). */
const fileWith = (path: string, text: string): Promise<string> => fileWhere(path, (content) => content.includes(text));

describe("retained-log files", () => {
  it("are redacted and free of terminal controls exactly like /mcp logs shows them (stderr and MCP logging alike)", async () => {
    const talker = fixtureServer("logger", { TOKEN: "${LOG_TEST_SECRET}", FIXTURE_SAY_AT_START: `started with ${SECRET}` });
    const h = await startHost({ talker }, { env });
    await h.waitForState("talker", "connected");
    await h.call("mcp__talker__say", { text: `stderr and log: token=${SECRET} \u001b[31mred\u001b[0m \u001b]0;title\u0007done` });
    await h.call("mcp__talker__say", { text: `only stderr ${SECRET}`, to: "stderr" });
    await h.call("mcp__talker__say", { text: `last ${SECRET}`, to: "log" });
    const file = retainedLogPath(h.privateDir, "talker");
    const onDisk = await fileWith(file, "last ");

    expect(onDisk).not.toContain(SECRET);
    expect(onDisk).not.toMatch(/[\u001b\u0007]/);
    expect(onDisk).toContain(`started with ${REDACTED}`);
    expect(onDisk).toContain(`[info] logger: last ${REDACTED}`);
    expect(onDisk).toContain(`only stderr ${REDACTED}`);
    // The same text as on screen, below the server's heading.
    expect(await logsShown(h, "talker")).toBe(`== talker ==\n${onDisk}`);
    // And the secret is in no file of the session's folder.
    for (const name of await readdir(h.privateDir, { recursive: true })) {
      expect(await readFile(`${h.privateDir}/${name}`, "utf8").catch(() => "")).not.toContain(SECRET);
    }
  });

  it("are rewritten with the secrets of a later settings change (a value the server logged before it became a secret)", async () => {
    const talker = fixtureServer("logger", { TOKEN: "${LOG_TEST_SECRET}" });
    const h = await startHost({ talker }, { env });
    await h.waitForState("talker", "connected");
    await h.call("mcp__talker__say", { text: `soon secret: ${LATER_SECRET}`, to: "stderr" });
    const file = retainedLogPath(h.privateDir, "talker");
    expect(await fileWith(file, "soon secret")).toContain(LATER_SECRET); // not a secret yet: kept faithfully

    // `add` of another server whose environment resolves to that value; the talker keeps its connection.
    const changed = buildConfig({ talker, other: fixtureServer("basic", { KEY: "${LOG_TEST_LATER}" }) }, { env });
    await h.host.applyConfig(changed, createRedactor(changed.secrets));
    await h.call("mcp__talker__say", { text: "after the change", to: "stderr" });
    const onDisk = await fileWith(file, "after the change");
    expect(onDisk).not.toContain(LATER_SECRET);
    expect(onDisk).toContain(`soon secret: ${REDACTED}`);
    expect(await logsShown(h, "talker")).toBe(`== talker ==\n${onDisk}`);
  });

  it("keep the newest 256 KiB of one stderr line longer than that, and /mcp logs names the file when it shows only the end", async () => {
    const talker = fixtureServer("logger", { TOKEN: "${LOG_TEST_SECRET}" });
    const h = await startHost({ talker }, { env });
    await h.waitForState("talker", "connected");
    const line = `long:${"y".repeat(300 * 1024)}:end-of-line`;
    await h.call("mcp__talker__say", { text: line, to: "stderr" });
    const file = retainedLogPath(h.privateDir, "talker");
    const onDisk = await fileWith(file, ":end-of-line");
    expect(onDisk.length).toBeGreaterThan(250 * 1024);
    expect(onDisk).toMatch(/^y+:end-of-line\n$/);
    const shown = await logsShown(h, "talker");
    expect(shown.startsWith(`[older lines not shown; retained logs: ${file}]\n`)).toBe(true);
    expect(shown).toMatch(/y+:end-of-line\n$/);
  });
});
