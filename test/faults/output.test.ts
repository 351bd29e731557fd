// Oversized output through OUR host with real processes: a single 10 MB text
// content over stdio and over HTTP (both under the 16 MiB message cap; the
// cap itself: test/faults/limits.test.ts), 100,000 lines, and a spill folder
// that cannot be written.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fixtureServer, PI_MAX_BYTES, PI_MAX_LINES, startHost, stopAllHosts, textOf } from "../helpers/host.ts";
import { startHttpFixture, type RunningServer } from "../helpers/servers.ts";
import { expectBystanderWorks, filesUnder } from "./_shared.ts";

let server: RunningServer | undefined;
afterEach(async () => {
  await stopAllHosts();
  await server?.stop();
  server = undefined;
});

const bystander = fixtureServer("basic");
const TEN_MB = 10 * 1024 * 1024;

/** The text before the truncation note, and the note. */
function split(text: string): { body: string; note: string } {
  const at = text.lastIndexOf("\n\n[output truncated");
  return at === -1 ? { body: text, note: "" } : { body: text.slice(0, at), note: text.slice(at + 2) };
}

describe("a 10 MB single text content", () => {
  it("over stdio arrives whole (under the 16 MiB message cap): cut to Pi's limit, spilled in full", async () => {
    const h = await startHost({ big: fixtureServer("big-output"), bystander }, { requestTimeoutMs: 60_000 });
    await h.waitForTools(2, { server: "big" });
    const out = await h.call("mcp__big__big", { bytes: TEN_MB });
    const { body, note } = split(textOf(out));
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(PI_MAX_BYTES);
    expect(note).toContain(`the complete ${TEN_MB}-character output is in ${out.details.spillPath as string}`);
    expect((await readFile(out.details.spillPath as string, "utf8")).length).toBe(TEN_MB);
    expect(h.status("big").state).toBe("connected");
    await expectBystanderWorks(h);
  }, 60_000);

  it("over HTTP arrives whole: cut to Pi's limit, spilled in full", async () => {
    server = await startHttpFixture("http-faults");
    const h = await startHost({ remote: { url: server.url }, bystander }, { requestTimeoutMs: 60_000 });
    await h.waitForTools(4, { server: "remote" });
    await h.waitForTools(3, { server: "bystander" });
    const out = await h.call("mcp__remote__big", { bytes: TEN_MB });
    const { body, note } = split(textOf(out));
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(PI_MAX_BYTES);
    expect(note).toContain(`the complete ${TEN_MB}-character output is in ${out.details.spillPath as string}`);
    expect((await readFile(out.details.spillPath as string, "utf8")).length).toBe(TEN_MB);
    expect(textOf(await h.call("mcp__remote__echo", { text: "after" }))).toBe("after");
    await expectBystanderWorks(h);
  }, 60_000);
});

describe("100,000 lines of output", () => {
  it("are cut to 2,000 lines with a note naming the spill file, which holds all 100,000", async () => {
    const h = await startHost({ big: fixtureServer("big-output"), bystander });
    await h.waitForTools(2, { server: "big" });
    const out = await h.call("mcp__big__many-lines", { n: 100_000 });
    const { body, note } = split(textOf(out));
    const lines = body.split("\n");
    expect(lines.length).toBeLessThanOrEqual(PI_MAX_LINES);
    expect(lines[0]).toBe("line 1");
    expect(lines.at(-1)).toBe(`line ${lines.length}`);
    expect(note).toMatch(/^\[output truncated to Pi's limit; the complete \d+-character output is in \S+\]$/);
    const spilled = (await readFile(out.details.spillPath as string, "utf8")).split("\n");
    expect(spilled).toHaveLength(100_000);
    expect(spilled.at(-1)).toBe("line 100000");
    await expectBystanderWorks(h);
  });
});

describe("a spill folder that cannot be written", () => {
  it("still gives the cut text, with a note saying the full output could not be saved and why; nothing is left on disk", async () => {
    const h = await startHost({ big: fixtureServer("big-output"), bystander });
    await h.waitForTools(2, { server: "big" });
    // A file where the spill folder should be: mkdir fails (ENOTDIR/EEXIST) even for root.
    const blocker = join(h.privateDir, "spill");
    await writeFile(blocker, "not a folder");
    const before = await filesUnder(h.privateDir);
    const out = await h.call("mcp__big__many-lines", { n: 100_000 });
    const { body, note } = split(textOf(out));
    expect(body.split("\n")).toHaveLength(PI_MAX_LINES);
    expect(note).toMatch(
      /^\[output truncated to Pi's limit; the complete \d+-character output could not be saved: .*(EEXIST|ENOTDIR).*\]$/,
    );
    expect(out.details.spillPath).toBeUndefined();
    expect(out.details.spillError).toMatch(/EEXIST|ENOTDIR/);
    expect(await readFile(blocker, "utf8")).toBe("not a folder");
    expect((await filesUnder(h.privateDir)).filter((file) => !file.startsWith("logs/"))).toEqual(
      before.filter((file) => !file.startsWith("logs/")),
    );
    // Small results are untouched, and the server and the others keep working.
    expect(textOf(await h.call("mcp__big__many-lines", { n: 3 }))).toBe("line 1\nline 2\nline 3");
    await expectBystanderWorks(h);
  });
});
