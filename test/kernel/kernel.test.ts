import { describe, expect, it } from "vitest";
import { createKernel, internalPlugins } from "../../src/composition.ts";
import { checkShape } from "../../src/config/schema.ts";
import { FEATURES, type Feature } from "../../src/kernel/settings.ts";
import { PluginHookError } from "../../src/kernel/errors.ts";
import { Kernel, STAGE, type KernelPlugin } from "../../src/kernel/kernel.ts";
import { registerPlugin } from "../../src/kernel/registry.ts";
import type { ConnectionContext, HostContext, MappedResult, ResultContext } from "../../src/kernel/types.ts";
import { HostResults } from "../../src/runtime/results.ts";

const plugin = (name: string, apply: (kernel: Kernel) => void): KernelPlugin => ({ name, apply });
const noContext = {} as ResultContext;
const emptyResult = (): MappedResult => ({ blocks: [], trailer: [], details: {}, isError: false });

describe("the kernel", () => {
  it("names the plugin and the hook when a synchronous tap throws", () => {
    const kernel = new Kernel([
      plugin("bad-names", (k) =>
        k.hooks.toolName.tap("bad-names", () => {
          throw new Error("boom");
        }),
      ),
    ]);
    let caught: unknown;
    try {
      kernel.hooks.toolName.call("mcp__a__b", { server: "a", tool: "b", serverTools: ["b"], servers: ["a"], taken: () => false });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(PluginHookError);
    expect((caught as PluginHookError).plugin).toBe("bad-names");
    expect((caught as PluginHookError).hook).toBe("toolName");
    expect((caught as Error).message).toBe('plugin "bad-names" failed in hook "toolName": boom');
    expect((caught as Error).cause).toBeInstanceOf(Error);
  });

  it("names the plugin and the hook when a promise tap rejects", async () => {
    const kernel = new Kernel([
      plugin("bad-mapper", (k) => k.hooks.mapResult.tapPromise("bad-mapper", async () => Promise.reject(new Error("no")))),
    ]);
    await expect(kernel.hooks.mapResult.promise(emptyResult(), noContext)).rejects.toMatchObject({
      plugin: "bad-mapper",
      hook: "mapResult",
    });
  });

  it("names the plugin and the hook when a callback-style tap fails", async () => {
    const kernel = new Kernel([
      plugin("bad-spill", (k) => k.hooks.spill.tapAsync("bad-spill", (_request, callback) => callback(new Error("disk full")))),
    ]);
    await expect(kernel.hooks.spill.promise({} as never)).rejects.toMatchObject({
      plugin: "bad-spill",
      hook: "spill",
      message: 'plugin "bad-spill" failed in hook "spill": disk full',
    });
  });

  it("runs taps by stage, so a third party can act before the built-ins", async () => {
    const order: string[] = [];
    const kernel = new Kernel([
      plugin("builtin", (k) =>
        k.hooks.mapResult.tapPromise({ name: "builtin", stage: STAGE.BUILTIN }, async (r) => {
          order.push("builtin");
          return r;
        }),
      ),
      plugin("early", (k) =>
        k.hooks.mapResult.tapPromise({ name: "early", stage: STAGE.BEFORE_BUILTIN }, async (r) => {
          order.push("early");
          return r;
        }),
      ),
    ]);
    await kernel.hooks.mapResult.promise(emptyResult(), noContext);
    expect(order).toEqual(["early", "builtin"]);
  });

  it("a mapper for one content type is one tap: it takes the blocks it answers for and leaves the rest to the built-ins", async () => {
    const csv: KernelPlugin = plugin("acme-csv", (k) =>
      k.hooks.mapContent.for("resource").tapPromise({ name: "acme-csv", stage: STAGE.BEFORE_BUILTIN }, async (block) => {
        const resource = block.resource as { mimeType?: string; text?: string };
        return resource.mimeType === "text/csv" ? [{ type: "text", text: `CSV rows: ${resource.text?.split("\n").length}` }] : undefined;
      }),
    );
    const kernel = createKernel({ plugins: [csv] });
    const host = {
      truncate: (text: string) => ({ text, truncated: false }),
      redact: (text: string) => text,
      privateDir: "/nonexistent",
    } as unknown as HostContext;
    const results = new HostResults(kernel, () => host);
    const raw = {
      content: [
        { type: "resource", resource: { uri: "file:///a.csv", mimeType: "text/csv", text: "a,b\n1,2" } },
        { type: "resource", resource: { uri: "file:///b.txt", mimeType: "text/plain", text: "plain" } },
        { type: "text", text: "hello" },
        { type: "acme-unknown" },
      ],
    };
    const outcome = await results.finish({ server: "s", operation: "t" }, await results.map({ server: "s", operation: "t" }, raw, {}));
    expect(outcome.content).toEqual([
      { type: "text", text: "CSV rows: 2" },
      { type: "text", text: "[resource file:///b.txt from s, text/plain]\nplain" },
      { type: "text", text: "hello" },
      { type: "text", text: '[unsupported MCP content type "acme-unknown"]' },
    ]);
  });

  it("names the plugin and the content type when a mapper fails", async () => {
    const kernel = new Kernel([
      plugin("bad-text", (k) => k.hooks.mapContent.for("text").tapPromise("bad-text", async () => Promise.reject(new Error("no")))),
    ]);
    await expect(kernel.hooks.mapContent.for("text").promise({ type: "text", text: "x" }, noContext)).rejects.toMatchObject({
      plugin: "bad-text",
      hook: "mapContent:text",
    });
  });

  it("refuses the same plugin twice", () => {
    expect(() => new Kernel([plugin("twice", () => {}), plugin("twice", () => {})])).toThrow('plugin "twice" is listed twice');
  });
});

describe("the composition root", () => {
  it("lists every internal plugin once, by name", () => {
    const names = internalPlugins().map((p) => p.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual(
      expect.arrayContaining([
        "transport-stdio",
        "transport-http",
        "transport-sse",
        "auth-bearer",
        "tool-names",
        "result-mapping",
        "spill",
        "resources",
        "roots",
        "logging",
        "instructions",
      ]),
    );
  });

  it("switches a feature off by name: a kernel without the stdio transport creates no stdio transport", async () => {
    const kernel = createKernel({ disable: ["transport-stdio"] });
    expect(kernel.has("transport-stdio")).toBe(false);
    const server = {
      name: "s",
      scope: "global",
      enabled: true,
      masked: false,
      transport: "stdio",
      auth: "none",
      definition: { transport: "stdio", command: "node", args: [], environment: {}, enabled: true },
    } as const;
    const context = { host: { cwd: "/" }, server, log: () => {} } as unknown as ConnectionContext;
    expect(await kernel.hooks.createTransport.promise({ ...context, auth: undefined })).toBeUndefined();
    expect(await createKernel().hooks.createTransport.promise({ ...context, auth: undefined })).toBeDefined();
  });

  it("applies every feature plugin of the table (FEATURES) under its name, and leaves out exactly the one its setting switches off", () => {
    const allOn = Object.fromEntries(FEATURES.map((feature) => [feature, true])) as Record<Feature, boolean>;
    const everything = internalPlugins().map((p) => p.name);
    expect(everything.filter((name) => (FEATURES as readonly string[]).includes(name))).toEqual([...FEATURES]);
    for (const feature of FEATURES) {
      expect(createKernel({ features: allOn }).has(feature)).toBe(true);
      const without = createKernel({ features: { ...allOn, [feature]: false } });
      expect(everything.filter((name) => !without.has(name))).toEqual([feature]);
    }
  });

  it("takes in the settings exactly the table's features, each a boolean: a core plugin cannot be switched off there", () => {
    for (const feature of FEATURES) expect(checkShape({ features: { [feature]: false } }, "settings.json")).toEqual([]);
    const core = internalPlugins()
      .map((p) => p.name)
      .filter((name) => !(FEATURES as readonly string[]).includes(name));
    expect(core).toContain("tool-names");
    for (const name of core) {
      expect(checkShape({ features: { [name]: false } }, "settings.json")).toEqual([
        { path: `mcp.features.${name}`, message: "unknown field", file: "settings.json" },
      ]);
    }
  });

  it("rejects an unknown plugin name instead of silently ignoring it", () => {
    expect(() => createKernel({ disable: ["no-such-plugin"] })).toThrow('unknown internal plugin "no-such-plugin"');
  });

  it("includes plugins that third parties registered, until they unregister", () => {
    const unregister = registerPlugin(plugin("third-party", () => {}));
    expect(createKernel().has("third-party")).toBe(true);
    unregister();
    expect(createKernel().has("third-party")).toBe(false);
  });
});
