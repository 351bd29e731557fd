// server-everything (the reference server) through OUR host, over each of
// the three transports: stdio, Streamable HTTP and legacy SSE.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { everythingStdio, startHost, textOf, type RawDefinition, type TestHost } from "../helpers/host.ts";
import { startEverything, type RunningServer } from "../helpers/servers.ts";

const TRANSPORTS: { label: string; mode?: "streamableHttp" | "sse"; definition: (server?: RunningServer) => RawDefinition }[] = [
  { label: "stdio", definition: () => everythingStdio() },
  { label: "Streamable HTTP", mode: "streamableHttp", definition: (server) => ({ url: server!.url }) },
  { label: "SSE", mode: "sse", definition: (server) => ({ url: server!.url, transport: "sse" }) },
];

const tool = (name: string) => `mcp__everything__${name}`;

describe.each(TRANSPORTS)("server-everything over $label", ({ mode, definition }) => {
  let server: RunningServer | undefined;
  let h: TestHost;

  beforeAll(async () => {
    if (mode) server = await startEverything(mode);
    h = await startHost({ everything: definition(server) });
    await h.waitForState("everything", "connected", 15_000);
    await h.waitForTools(1, { server: "everything" });
  }, 30_000);

  afterAll(async () => {
    await h?.stop();
    await server?.stop();
  });

  it("connects and lists its tools as mcp__everything__<tool>", async () => {
    const status = h.status("everything");
    expect(status.serverInfo?.name).toContain("everything");
    expect(status.protocolVersion).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    const names = [...h.sink.active];
    expect(names.length).toBe(status.tools);
    expect(names.length).toBeGreaterThanOrEqual(12);
    for (const name of names) expect(name).toMatch(/^mcp__everything__[a-zA-Z0-9_-]+$/);
    for (const name of [
      "echo",
      "get-sum",
      "get-tiny-image",
      "get-structured-content",
      "get-resource-links",
      "trigger-long-running-operation",
    ]) {
      expect(names).toContain(tool(name));
    }
  });

  it("calls echo and get-sum", async () => {
    const echo = await h.call(tool("echo"), { message: "hello pi" });
    expect(echo.isError).toBe(false);
    expect(textOf(echo)).toBe("Echo: hello pi");
    const sum = await h.call(tool("get-sum"), { a: 2, b: 40 });
    expect(sum.isError).toBe(false);
    expect(textOf(sum)).toContain("42");
  });

  it("maps get-tiny-image to Pi image content", async () => {
    const out = await h.call(tool("get-tiny-image"), {});
    const image = out.content.find((item) => item.type === "image");
    expect(image).toMatchObject({ type: "image", mimeType: "image/png" });
    expect(image?.type === "image" && Buffer.from(image.data, "base64").subarray(1, 4).toString()).toBe("PNG");
  });

  it("shows get-structured-content as labelled JSON and keeps it in details, with no output-schema error", async () => {
    const out = await h.call(tool("get-structured-content"), { location: "Chicago" });
    const expected = { temperature: 36, conditions: "Light rain / drizzle", humidity: 82 };
    expect(out.isError).toBe(false);
    expect(out.details.structuredContent).toEqual(expected);
    expect(out.details.outputSchemaError).toBeUndefined();
    const labelled = out.content.find((item) => item.type === "text" && item.text.startsWith("[structured content]"));
    expect(labelled?.type === "text" && JSON.parse(labelled.text.slice(labelled.text.indexOf("\n") + 1))).toEqual(expected);
    expect(textOf(out)).not.toContain("[warning");
  });

  it("turns get-resource-links into provenance-labelled text", async () => {
    const out = await h.call(tool("get-resource-links"), { count: 2 });
    const links = out.content.filter((item) => item.type === "text" && item.text.startsWith("[resource link from everything: "));
    expect(links).toHaveLength(2);
    expect(textOf(out)).toMatch(/\[resource link from everything: demo:\/\/resource\/\S+/);
  });

  it("reports progress of trigger-long-running-operation", async () => {
    const updates: { progress: number; total?: number }[] = [];
    const out = await h.call(
      tool("trigger-long-running-operation"),
      { duration: 0.6, steps: 3 },
      { onProgress: (update) => updates.push(update) },
    );
    expect(textOf(out)).toContain("Long running operation completed");
    // The last notification may race the response (the SDK then drops it), so at least the first two arrive.
    expect(updates.length).toBeGreaterThanOrEqual(2);
    expect(updates[0]).toMatchObject({ progress: 1, total: 3 });
  });

  it("cancels a call through its AbortSignal, and the next call still works", async () => {
    const controller = new AbortController();
    const started = Date.now();
    const pending = h.call(
      tool("trigger-long-running-operation"),
      { duration: 20, steps: 40 },
      { signal: controller.signal, onProgress: () => controller.abort() },
    );
    await expect(pending).rejects.toThrow(/cancelled/);
    expect(Date.now() - started).toBeLessThan(5_000);
    const echo = await h.call(tool("echo"), { message: "still here" });
    expect(textOf(echo)).toBe("Echo: still here");
    expect(h.status("everything").state).toBe("connected");
  });
});
