/**
 * The completion plugin in-process (fixture servers over the SDK's in-memory
 * transport pair): it answers the kernel's `complete` hook with
 * `completion/complete`, which `/mcp prompt` argument completion asks
 * (plugins/prompts). A server that does not declare `completions` is never
 * asked; whatever goes wrong (an error, a malformed answer, a server that
 * does not implement it, noted once in its log) means no suggestions. Values
 * are strings, each once, at most 100. Without the plugin nobody answers and
 * no server is asked.
 */
import { afterEach, describe, expect, it } from "vitest";
import { CompletionPlugin, MAX_COMPLETION_VALUES } from "../../plugins/completion/index.ts";
import { PromptsPlugin, promptCommand } from "../../plugins/prompts/index.ts";
import type { KernelPlugin } from "../../src/kernel/kernel.ts";
import { eventually } from "../helpers/wait.ts";
import { type FixtureServer, type PluginTestHost, pluginHost, stopAllHosts } from "./harness.ts";

afterEach(stopAllHosts);

/** A 2025-era server with prompt `greet` {who, tone} whose completion answers `answer(argument, value, context)`. */
function completing(
  answer: (params: Record<string, any>) => unknown,
  capabilities: Record<string, unknown> = { prompts: {}, completions: {} },
): FixtureServer {
  return {
    era: "legacy",
    options: { capabilities },
    build(server) {
      server.server.setRequestHandler("prompts/list", () => ({
        prompts: [{ name: "greet", arguments: [{ name: "who", required: true }, { name: "tone" }] }],
      }));
      if (capabilities.completions) server.server.setRequestHandler("completion/complete", (request) => answer(request.params) as never);
    },
  };
}

const NAMES = ["Ada", "Alan", "Alonzo", "Barbara"];

async function host(fixture: FixtureServer, plugins: KernelPlugin[] = [new CompletionPlugin(), new PromptsPlugin()]) {
  const h = await pluginHost(plugins, { docs: fixture });
  await h.waitForState("docs", "connected");
  return h;
}

/** What `/mcp prompt ` completes the typed line to (its values). */
async function completeLine(h: PluginTestHost, line: string): Promise<string[]> {
  const words = line.split(" ");
  const head = words
    .slice(0, -1)
    .map((word) => `${word} `)
    .join("");
  const items = await promptCommand.complete!({ words, head, host: h.host });
  return (items ?? []).map((item) => item.value);
}

/** What the host's `complete` hook suggests for an argument of `greet` on docs. */
async function complete(h: PluginTestHost, argument: string, value: string, context?: Record<string, string>): Promise<readonly string[]> {
  const client = await h.host.server("docs")!.connected();
  return h.host.complete({ client, requestTimeoutMs: 5_000, prompt: "greet", argument, value, ...(context && { context }) });
}

describe("argument values", () => {
  it("are what the server suggests for the prompt, the argument, the typed value and the arguments given", async () => {
    const h = await host(
      completing((params) => ({
        completion: {
          values: NAMES.filter((name) => name.startsWith(params.argument.value)).map((name) =>
            params.context?.arguments?.tone === "formal" ? `Dr. ${name}` : name,
          ),
        },
      })),
    );
    expect(await complete(h, "who", "Al")).toEqual(["Alan", "Alonzo"]);
    expect(await complete(h, "who", "A", { tone: "formal" })).toEqual(["Dr. Ada", "Dr. Alan", "Dr. Alonzo"]);
    const asked = h.server("docs").received.filter((message) => "method" in message && message.method === "completion/complete");
    expect(asked[1]).toMatchObject({
      params: {
        ref: { type: "ref/prompt", name: "greet" },
        argument: { name: "who", value: "A" },
        context: { arguments: { tone: "formal" } },
      },
    });
    // What /mcp prompt offers for the value being typed.
    expect(await completeLine(h, "docs greet --arg who=Al")).toEqual(["docs greet --arg who=Alan", "docs greet --arg who=Alonzo"]);
  });

  it("are strings only, each once, at most 100", async () => {
    const many = Array.from({ length: 150 }, (_, index) => `v${index}`);
    const h = await host(completing(() => ({ completion: { values: ["dup", "dup", 7, null, ...many] } })));
    const values = await complete(h, "who", "");
    expect(values).toHaveLength(MAX_COMPLETION_VALUES);
    expect(values.slice(0, 3)).toEqual(["dup", "v0", "v1"]);
  });

  it("are none when the server fails, answers nonsense, or does not implement completion (said once in its log)", async () => {
    const failing = await host(
      completing(() => {
        throw new Error("boom");
      }),
    );
    expect(await complete(failing, "who", "A")).toEqual([]);
    const nonsense = await host(completing(() => ({ completion: "everything" })));
    expect(await complete(nonsense, "who", "A")).toEqual([]);
    const unimplemented = await host({
      era: "legacy",
      options: { capabilities: { prompts: {}, completions: {} } },
      build(server) {
        server.server.setRequestHandler("prompts/list", () => ({ prompts: [{ name: "greet", arguments: [{ name: "who" }] }] }));
        server.server.removeRequestHandler("completion/complete");
      },
    });
    const log = unimplemented.host.server("docs")!.log;
    const request = { requestTimeoutMs: 5_000, prompt: "greet", argument: "who", value: "A", log: (text: string) => log.append(text) };
    const client = await unimplemented.host.server("docs")!.connected();
    expect(await unimplemented.host.complete({ client, ...request })).toEqual([]);
    expect(await unimplemented.host.complete({ client, ...request })).toEqual([]);
    expect(log.text().match(/does not implement completion\/complete/g)).toHaveLength(1);
  });

  it("are never asked of a server that does not declare completions", async () => {
    const h = await host(completing(() => ({ completion: { values: ["x"] } }), { prompts: {} }));
    expect(await complete(h, "who", "A")).toEqual([]);
    expect(h.server("docs").methods()).not.toContain("completion/complete");
  });

  it("are asked of no server without the completion plugin", async () => {
    const h = await host(
      completing(() => ({ completion: { values: ["x"] } })),
      [new PromptsPlugin()],
    );
    expect(await complete(h, "who", "A")).toEqual([]);
    expect(await completeLine(h, "docs greet --arg who=")).toEqual([]);
    expect(h.server("docs").methods()).not.toContain("completion/complete");
  });
});

describe("prompt names", () => {
  it("are listed once for completion and listed again after the server says its prompts changed", async () => {
    let names = ["greet"];
    const h = await host({
      era: "legacy",
      options: { capabilities: { prompts: { listChanged: true } } },
      build(server) {
        server.server.setRequestHandler("prompts/list", () => ({ prompts: names.map((name) => ({ name })) }));
      },
    });
    expect(await completeLine(h, "docs g")).toEqual(["docs greet"]);
    names = ["greet", "goodbye"];
    expect(await completeLine(h, "docs g")).toEqual(["docs greet"]); // the recent listing answers
    const listed = () =>
      h
        .server("docs")
        .methods()
        .filter((method) => method === "prompts/list").length;
    const before = listed();
    await h.server("docs").instance().server.sendPromptListChanged();
    expect(await eventuallyLists(h, "docs g", 2)).toEqual(["docs greet", "docs goodbye"]);
    expect(listed()).toBe(before + 1);
  });
});

/** Completes `line` until it offers `count` values: the list-changed notice is handled when it arrives, which nothing announces. */
function eventuallyLists(h: PluginTestHost, line: string, count: number): Promise<string[]> {
  return eventually(
    async () => {
      const values = await completeLine(h, line);
      return values.length >= count && values;
    },
    10_000,
    () => `"${line}" never completed to ${count} values`,
  );
}
