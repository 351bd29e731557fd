// `/mcp logs` shows the newest part of the retained logs within Pi's display
// limit and, when it cuts, names the private retained-log files that hold more.
import { stat } from "node:fs/promises";
import { afterEach, expect, it } from "vitest";
import { runCommandLine } from "../../src/commands/index.ts";
import { fixtureServer, piEnvironment, startHost, stopAllHosts, until, type TestHost } from "../helpers/host.ts";
import { fileWhere } from "../helpers/wait.ts";

afterEach(stopAllHosts);

const DISPLAY_BYTES = 50 * 1024;

function logs(h: TestHost, ...argv: string[]) {
  return runCommandLine([...h.host.kernelInstance.commands], ["logs", ...argv], piEnvironment(h));
}

/** The files a cut output names, in order. */
function namedFiles(output: string): string[] | undefined {
  const header = /^\[older lines not shown; retained logs: ([^\]]+)\]\n/.exec(output);
  return header ? header[1]!.split(", ") : undefined;
}

it("when the logs exceed Pi's display limit, shows the newest part and names the retained-log file of each server shown", async () => {
  const h = await startHost({
    flood: fixtureServer("stderr-flood", { FIXTURE_FLOOD_MB: "1" }),
    quiet: fixtureServer("witness"),
    off: fixtureServer("witness", {}, { enabled: false }),
  });
  await until(
    () => h.host.server("flood")?.log.text().includes("FLOOD DONE") === true,
    20_000,
    () => `flood logged ${h.host.server("flood")?.log.bytes} bytes`,
  );

  const one = await logs(h, "flood");
  expect(one.exitCode).toBe(0);
  const files = namedFiles(one.output);
  expect(files, one.output.slice(0, 200)).toHaveLength(1);
  expect(one.output.trimEnd().endsWith("FLOOD DONE")).toBe(true);
  expect(Buffer.byteLength(one.output)).toBeLessThanOrEqual(DISPLAY_BYTES + 1024);
  // The named file is the private copy of the whole retained log (its newest 256 KiB), more than was shown.
  const [file] = files!;
  const content = await fileWhere(file!, (text) => text.includes("FLOOD DONE"));
  expect(content.length).toBeGreaterThan(one.output.length);
  expect(content.endsWith("FLOOD DONE\n")).toBe(true);
  expect(file!.startsWith(`${h.privateDir}/`)).toBe(true);
  expect((await stat(file!)).mode & 0o777).toBe(0o600);

  // A server whose log fits is shown whole, without the note.
  const quiet = await logs(h, "quiet");
  expect(quiet.output).toMatch(/^== quiet ==\n/);
  expect(namedFiles(quiet.output)).toBeUndefined();

  // Several servers: the combined text is cut, and every file named holds that server's log (an attempt line counts);
  // a server that logged nothing at all (disabled: it never made an attempt) has no file to name.
  const all = await logs(h);
  const named = namedFiles(all.output)!;
  expect(named).toContain(file);
  expect(named).toHaveLength(2);
  expect(named.some((path) => path.endsWith("/off.log"))).toBe(false);
  h.host.server("quiet")!.log.append("a quiet line\n");
  const quietFile = named.find((path) => path !== file)!;
  expect(await fileWhere(quietFile, (text) => text.includes("a quiet line"))).not.toContain("FLOOD");
});
