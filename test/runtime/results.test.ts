// Results through OUR host: Pi's output limit with a private Result Spill, and
// servers whose schemas are malformed or whose output contradicts its schema.
import { readFile, stat } from "node:fs/promises";
import { dirname } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fixtureServer, PI_MAX_BYTES, PI_MAX_LINES, startHost, stopAllHosts, textOf } from "../helpers/host.ts";

afterEach(stopAllHosts);

/** The text before the host's truncation notice, and the notice. */
function split(text: string): { body: string; notice: string } {
  const at = text.lastIndexOf("\n\n[output truncated");
  return at === -1 ? { body: text, notice: "" } : { body: text.slice(0, at), notice: text.slice(at) };
}

describe("oversized output", () => {
  it("cuts a 5 MB result to Pi's limit and keeps the complete output in a private spill file whose path it gives", async () => {
    const h = await startHost({ big: fixtureServer("big-output") });
    await h.waitForTools(2, { server: "big" });
    const out = await h.call("mcp__big__big", { bytes: 5_000_000 });
    expect(out.isError).toBe(false);
    const text = textOf(out);
    const { body, notice } = split(text);
    expect(Buffer.byteLength(body, "utf8")).toBeLessThanOrEqual(PI_MAX_BYTES);
    expect(body).toBe("x".repeat(body.length));
    // The notice is a short trailer, as Pi's own tools append one.
    expect(Buffer.byteLength(text, "utf8")).toBeLessThanOrEqual(PI_MAX_BYTES + 512);
    const spillPath = out.details.spillPath as string;
    expect(typeof spillPath).toBe("string");
    expect(notice).toContain(spillPath);
    expect(spillPath.startsWith(h.privateDir)).toBe(true);

    const spilled = await readFile(spillPath, "utf8");
    expect(spilled.length).toBe(5_000_000);
    expect(spilled).toBe("x".repeat(5_000_000));
    expect((await stat(spillPath)).mode & 0o777).toBe(0o600);
    expect((await stat(dirname(spillPath))).mode & 0o777).toBe(0o700);
  });

  it("cuts a many-line result to 2,000 lines and spills the rest", async () => {
    const h = await startHost({ big: fixtureServer("big-output") });
    await h.waitForTools(2, { server: "big" });
    const out = await h.call("mcp__big__many-lines", { n: 10_000 });
    const { body, notice } = split(textOf(out));
    const lines = body.split("\n");
    expect(lines.length).toBeLessThanOrEqual(PI_MAX_LINES);
    expect(lines[0]).toBe("line 1");
    expect(notice).toContain(out.details.spillPath as string);
    const spilled = (await readFile(out.details.spillPath as string, "utf8")).split("\n");
    expect(spilled).toHaveLength(10_000);
    expect(spilled.at(-1)).toBe("line 10000");
  });

  it("leaves output within the limit untouched and spills nothing", async () => {
    const h = await startHost({ big: fixtureServer("big-output") });
    await h.waitForTools(2, { server: "big" });
    const out = await h.call("mcp__big__big", { bytes: 10_000, lines: 100 });
    expect(textOf(out).length).toBe(10_000);
    expect(out.details.spillPath).toBeUndefined();
  });
});

describe("broken schemas", () => {
  it("lists every tool and runs the good ones; bad-type and bad-ref fail only when called, naming the tool", async () => {
    const h = await startHost({ schemas: fixtureServer("schemas") });
    const names = await h.waitForTools(7, { server: "schemas" });
    expect(names.sort()).toEqual(
      ["bad-output", "bad-ref", "bad-type", "echo", "lying", "noop", "truthful"].map((name) => `mcp__schemas__${name}`).sort(),
    );
    expect(textOf(await h.call("mcp__schemas__echo", { text: "good" }))).toBe("good");
    expect(textOf(await h.call("mcp__schemas__noop"))).toBe("noop");
    await expect(h.call("mcp__schemas__bad-type", { x: 1 })).rejects.toThrow(/bad-type.*schema/);
    await expect(h.call("mcp__schemas__bad-ref", { x: 1 })).rejects.toThrow(/bad-ref.*(schema|reference|\$ref)/);
    // The broken tools did not disturb the good ones or the connection.
    expect(textOf(await h.call("mcp__schemas__echo", { text: "still good" }))).toBe("still good");
    expect(h.status("schemas").state).toBe("connected");
  });

  it("reports an output-schema failure for lying in details and text while still returning its content", async () => {
    const h = await startHost({ schemas: fixtureServer("schemas") });
    await h.waitForTools(7, { server: "schemas" });
    const lying = await h.call("mcp__schemas__lying");
    expect(lying.isError).toBe(false);
    expect(textOf(lying)).toContain('{"count":"three"}');
    expect(lying.details.structuredContent).toEqual({ count: "three" });
    expect(lying.details.outputSchemaError).toMatch(/count/);
    expect(textOf(lying)).toMatch(/\[warning: .*count/);

    const truthful = await h.call("mcp__schemas__truthful");
    expect(truthful.details.structuredContent).toEqual({ count: 3 });
    expect(truthful.details.outputSchemaError).toBeUndefined();
    expect(textOf(truthful)).not.toContain("[warning");

    // An output schema that cannot be compiled is reported the same way; the content still arrives.
    const badOutput = await h.call("mcp__schemas__bad-output");
    expect(badOutput.details.structuredContent).toEqual({ value: 1 });
    expect(badOutput.details.outputSchemaError).toMatch(/schema/);
  });

  it("still lists the other tools when one input schema is not an object schema", async () => {
    const h = await startHost({ schemas: fixtureServer("schemas", { FIXTURE_SCHEMAS: "non-object" }) });
    const names = await h.waitForTools(7, { server: "schemas" });
    for (const tool of ["echo", "noop", "truthful", "lying"]) expect(names).toContain(`mcp__schemas__${tool}`);
    expect(h.status("schemas").state).toBe("connected");
    expect(textOf(await h.call("mcp__schemas__echo", { text: "fine" }))).toBe("fine");
  });
});
