/**
 * The result-mapping plugin in-process (fixture servers over the SDK's
 * in-memory transport pair): what each MCP content block of a server's
 * result becomes in Pi. Text and images map to Pi's own; embedded text
 * resources and resource links become provenance-labelled text; audio and
 * binary resources are saved as private files (0600) whose path the text
 * gives; structured content is shown as labelled JSON and kept in the
 * details. Without the plugin nothing maps the blocks. (A block of a type
 * nobody maps says so: the SDK server refuses to send one, so the kernel
 * test and the raw JSON-RPC fixtures of the real-process tests show that.)
 */
import { readFile, stat } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { ResultMappingPlugin } from "../../plugins/result-mapping/index.ts";
import { textOf } from "../helpers/host.ts";
import { type FixtureServer, pluginHost, stopAllHosts } from "./harness.ts";

afterEach(stopAllHosts);

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const WAV = Buffer.from("RIFF-not-really-a-wav").toString("base64");

/** A 2025-era server whose tool `all` answers one block of every kind (and structured content). */
const everyKind: FixtureServer = {
  era: "legacy",
  options: { capabilities: { tools: {} } },
  build(server) {
    server.server.setRequestHandler("tools/list", () => ({ tools: [{ name: "all", inputSchema: { type: "object" } }] }));
    server.server.setRequestHandler("tools/call", () => ({
      content: [
        { type: "text", text: "plain text" },
        { type: "image", data: PNG, mimeType: "image/png" },
        { type: "audio", data: WAV, mimeType: "audio/wav" },
        { type: "resource", resource: { uri: "file:///notes/a.md", mimeType: "text/markdown", text: "# A" } },
        { type: "resource", resource: { uri: "file:///bin/b", mimeType: "application/pdf", blob: PNG } },
        { type: "resource_link", uri: "file:///notes/c.md", name: "c", mimeType: "text/markdown", description: "the third" },
      ],
      structuredContent: { total: 3, items: ["a", "b"] },
    })) as never;
  },
};

describe("a result with every kind of content", () => {
  it("maps each block to Pi content in order, saving audio and binaries privately", async () => {
    const h = await pluginHost([new ResultMappingPlugin()], { docs: everyKind });
    await h.waitForTools(1, { server: "docs" });
    const outcome = await h.call("mcp__docs__all");
    expect(outcome.content.filter((item) => item.type === "image")).toEqual([{ type: "image", data: PNG, mimeType: "image/png" }]);
    const lines = textOf(outcome).split("\n");
    expect(lines[0]).toBe("plain text");
    const audio = /^\[audio audio\/wav saved to (\S+)\]$/.exec(lines[1]!);
    expect(audio, lines[1]).not.toBeNull();
    expect(lines.slice(2, 4)).toEqual(["[resource file:///notes/a.md from docs, text/markdown]", "# A"]);
    const binary = /^\[binary resource file:\/\/\/bin\/b from docs, application\/pdf saved to (\S+)\]$/.exec(lines[4]!);
    expect(binary, lines[4]).not.toBeNull();
    expect(lines[5]).toBe("[resource link from docs: file:///notes/c.md (c, text/markdown, the third)]");
    expect(lines.slice(6).join("\n")).toBe('[structured content]\n{\n  "total": 3,\n  "items": [\n    "a",\n    "b"\n  ]\n}');
    expect(outcome.details.structuredContent).toEqual({ total: 3, items: ["a", "b"] });
    for (const [path, bytes] of [
      [audio![1]!, WAV],
      [binary![1]!, PNG],
    ] as const) {
      expect(path.startsWith(h.privateDir)).toBe(true);
      expect((await stat(path)).mode & 0o777).toBe(0o600);
      expect((await readFile(path)).toString("base64")).toBe(bytes);
    }
  });

  it("maps nothing without the plugin: no text reaches the model", async () => {
    const h = await pluginHost([], { docs: everyKind });
    await h.waitForTools(1, { server: "docs" });
    const outcome = await h.call("mcp__docs__all");
    expect(outcome.content).toEqual([]);
    expect(outcome.details).not.toHaveProperty("structuredContent");
  });
});
