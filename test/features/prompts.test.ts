// `/mcp prompt` through OUR host (McpHost + the real kernel) against server-everything and a prompt fixture.
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { runCommandLine } from "../../src/commands/index.ts";
import type { CommandResult } from "../../src/kernel/commands.ts";
import { createKernel } from "../../src/composition.ts";
import type { HostServices, SessionMessage, SessionServices } from "../../src/kernel/services.ts";
import { PROMPT_MESSAGE_TYPE, type PromptRecord } from "../../plugins/prompts/index.ts";
import { listPrompts } from "../../plugins/prompts/catalog.ts";
import {
  eventually,
  everythingStdio,
  piEnvironment,
  startHost,
  stopAllHosts,
  type StartHostOptions,
  type TestHost,
} from "../helpers/host.ts";
import { nodePath } from "../helpers/servers.ts";

const PROMPT_SERVER = fileURLToPath(new URL("./fixtures/prompt-server.mjs", import.meta.url));
const PROMPT_SERVER_2026 = fileURLToPath(new URL("./fixtures/prompt-server-2026.mjs", import.meta.url));
const promptServer = (environment: Record<string, string> = {}) => ({ command: nodePath(), args: [PROMPT_SERVER], environment });

/** A session that records the messages a plugin adds. */
function recordingSession(): SessionServices & { readonly added: SessionMessage[] } {
  const added: SessionMessage[] = [];
  return {
    added,
    append: () => undefined,
    entries: () => [],
    queueMessage: () => undefined,
    addMessage: (message) => void added.push(message),
    onBranchChange: () => () => undefined,
  };
}

interface PromptHost {
  readonly h: TestHost;
  readonly session: ReturnType<typeof recordingSession>;
  run(line: string): Promise<CommandResult>;
}

async function promptHost(servers: Parameters<typeof startHost>[0], options: StartHostOptions = {}): Promise<PromptHost> {
  const session = recordingSession();
  const services: HostServices = { session };
  const h = await startHost(servers, { services, ...options });
  const commands = h.host.kernelInstance.commands;
  // Split like Pi's argument parser would (no quoting is needed in these tests).
  return { h, session, run: (line) => runCommandLine(commands, line.split(" "), piEnvironment(h)) };
}

const texts = (message: SessionMessage) => message.content.flatMap((item) => (item.type === "text" ? [item.text] : [])).join("\n");
const record = (message: SessionMessage) => message.details as unknown as PromptRecord;

describe("prompts from server-everything", () => {
  // One server-everything for the group (it is slow to start); each test starts with no messages added.
  let p: PromptHost;
  beforeAll(async () => {
    p = await promptHost({ everything: everythingStdio() });
  });
  beforeEach(() => {
    p.session.added.length = 0;
  });
  afterAll(() => p?.h.stop());

  it("lists its prompts, paged like the tool catalog", async () => {
    const { h } = p;
    await h.waitForState("everything", "connected", 20_000);
    const names = (await listPrompts(h.host.server("everything")!)).map((prompt) => prompt.name);
    expect(names).toEqual(expect.arrayContaining(["simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"]));
    const args = (await listPrompts(h.host.server("everything")!)).find((prompt) => prompt.name === "args-prompt")!.arguments;
    expect(args).toEqual([expect.objectContaining({ name: "city", required: true }), expect.objectContaining({ name: "state" })]);
  });

  it("adds a prompt's messages to the conversation as one provenance-labelled, versioned custom message", async () => {
    const result = await p.run("prompt everything simple-prompt");
    expect(result).toMatchObject({ exitCode: 0 });
    expect(result.output).toContain('Added MCP prompt "simple-prompt" from "everything" (1 message)');
    expect(p.session.added).toHaveLength(1);
    const [message] = p.session.added;
    expect(message!.customType).toBe(PROMPT_MESSAGE_TYPE);
    expect(message!.content).toEqual([
      {
        type: "text",
        text: '[MCP prompt "simple-prompt" from server "everything": 1 message, run by the person with /mcp prompt]\n[user]\nThis is a simple prompt without arguments.',
      },
    ]);
    expect(record(message!)).toEqual({
      version: 1,
      server: "everything",
      prompt: "simple-prompt",
      arguments: {},
      description: "A prompt with no arguments",
      messages: [{ role: "user", text: "This is a simple prompt without arguments.", images: [] }],
    });
  });

  it("passes --arg values and checks them against the prompt's declared arguments", async () => {
    const ok = await p.run("prompt everything args-prompt --arg city=Paris --arg state=Texas=TX");
    expect(ok.exitCode).toBe(0);
    expect(texts(p.session.added[0]!)).toContain("What's weather in Paris, Texas=TX?");
    expect(texts(p.session.added[0]!)).toContain('(city="Paris", state="Texas=TX")');
    expect(record(p.session.added[0]!).arguments).toEqual({ city: "Paris", state: "Texas=TX" });

    const missing = await p.run("prompt everything args-prompt --arg state=Texas");
    expect(missing.exitCode).toBe(2);
    expect(missing.output).toBe(
      'prompt: prompt "args-prompt" needs --arg city=VALUE\nusage: prompt everything args-prompt --arg city=VALUE [--arg state=VALUE]',
    );
    const unknown = await p.run("prompt everything args-prompt --arg city=Paris --arg country=FR");
    expect(unknown.exitCode).toBe(2);
    expect(unknown.output).toContain('prompt "args-prompt" has no argument "country" (arguments: city, state)');
    const twice = await p.run("prompt everything args-prompt --arg city=Paris --arg city=Lyon");
    expect(twice).toMatchObject({ exitCode: 2, output: expect.stringContaining("--arg city is given twice") });
    const malformed = await p.run("prompt everything args-prompt --arg city");
    expect(malformed).toMatchObject({ exitCode: 2, output: expect.stringContaining('--arg takes NAME=VALUE, got "city"') });
    const noName = await p.run("prompt everything");
    expect(noName).toMatchObject({ exitCode: 2, output: expect.stringContaining("missing <prompt>") });
    // Nothing was added by the failed runs.
    expect(p.session.added).toHaveLength(1);
  });

  it("runs the completable prompt and maps an embedded resource with its provenance", async () => {
    expect((await p.run("prompt everything completable-prompt --arg department=Engineering --arg name=Alice")).exitCode).toBe(0);
    expect(texts(p.session.added[0]!)).toContain("Please promote Alice to the head of the Engineering team.");
    expect((await p.run("prompt everything resource-prompt --arg resourceType=Text --arg resourceId=1")).exitCode).toBe(0);
    const embedded = texts(p.session.added[1]!);
    expect(embedded).toContain("[user]\nThis prompt includes the Text resource with id: 1.");
    expect(embedded).toMatch(/\[user\]\n\[resource demo:\/\/resource\/dynamic\/text\/1 from everything, text\/plain\]\n/);
    expect(record(p.session.added[1]!).messages.map((message) => message.role)).toEqual(["user", "user"]);
  });

  it("names unknown prompts and servers, and reports server errors", async () => {
    const unknown = await p.run("prompt everything no-such-prompt");
    expect(unknown.exitCode).toBe(1);
    expect(unknown.output).toMatch(/^server "everything" has no prompt "no-such-prompt" \(prompts: .*simple-prompt.*\)$/);
    const noServer = await p.run("prompt elsewhere simple-prompt");
    expect(noServer).toMatchObject({ exitCode: 1, output: 'server "elsewhere" is not configured or not enabled in this session' });
    const failing = await p.run("prompt everything resource-prompt --arg resourceType=Nope --arg resourceId=1");
    expect(failing.exitCode).toBe(1);
    expect(failing.output).toMatch(/^everything prompts\/get failed: .*Invalid resourceType/);
    expect(p.session.added).toHaveLength(0);
  });
});

describe("prompt content", () => {
  afterEach(stopAllHosts);

  it("keeps images in place between role-labelled text and records their metadata", async () => {
    const p = await promptHost({ prompts: promptServer() });
    expect((await p.run("prompt prompts picture")).exitCode).toBe(0);
    const [message] = p.session.added;
    expect(message!.content.map((item) => item.type)).toEqual(["text", "image", "text"]);
    expect(message!.content[0]).toEqual({
      type: "text",
      text: '[MCP prompt "picture" from server "prompts": 3 messages, run by the person with /mcp prompt]\n[user]\nDescribe this picture.\n[user]',
    });
    expect(message!.content[1]).toMatchObject({ type: "image", mimeType: "image/png" });
    expect(message!.content[2]).toEqual({ type: "text", text: "[assistant]\nIt is a single pixel." });
    expect(record(message!).messages).toEqual([
      { role: "user", text: "Describe this picture.", images: [] },
      { role: "user", text: "", images: [{ mimeType: "image/png", bytes: 70 }] },
      { role: "assistant", text: "It is a single pixel.", images: [] },
    ]);
  });

  it("saves binary resources privately and cuts oversized text to Pi's limit with a spill", async () => {
    const p = await promptHost({ prompts: promptServer() });
    expect((await p.run("prompt prompts files")).exitCode).toBe(0);
    const files = texts(p.session.added[0]!);
    const saved = /\[binary resource file:\/\/\/data\.bin from prompts, application\/octet-stream saved to (\S+)\]/.exec(files)?.[1];
    expect(saved).toBeDefined();
    expect(await readFile(saved!, "utf8")).toBe("binary!");
    expect(files).toContain("[resource link from prompts: file:///notes.md (notes, text/markdown)]");

    expect((await p.run("prompt prompts big")).exitCode).toBe(0);
    const big = p.session.added[1]!;
    const spillPath = record(big).spillPath;
    expect(spillPath).toBeDefined();
    expect(texts(big)).toContain(`the complete`);
    expect(texts(big)).toContain(spillPath);
    expect(texts(big).split("\n").length).toBeLessThanOrEqual(2_003);
    expect(await readFile(spillPath!, "utf8")).toContain("line 3000");
  });

  it("rejects a prompt list whose pages repeat a cursor", async () => {
    const p = await promptHost({ prompts: promptServer({ PROMPT_PAGING: "repeat" }) });
    const result = await p.run("prompt prompts greet --arg who=Ada");
    expect(result.exitCode).toBe(1);
    expect(result.output).toContain("prompts prompts/list: the server repeated a pagination cursor");
    expect(p.session.added).toHaveLength(0);
  });

  it("lists every page of a paged prompt catalog", async () => {
    const p = await promptHost({ prompts: promptServer() });
    await p.h.waitForState("prompts", "connected");
    expect((await listPrompts(p.h.host.server("prompts")!)).map((prompt) => prompt.name)).toEqual(["picture", "greet", "big", "files"]);
  });
});

describe("a 2026-07-28 peer", () => {
  afterEach(stopAllHosts);

  it("lists and gets its prompts over the modern protocol", async () => {
    const p = await promptHost({ modern: { command: nodePath(), args: [PROMPT_SERVER_2026] } });
    const result = await p.run("prompt modern team --arg department=Sales --arg lead=Dana");
    expect(result.output).toContain('Added MCP prompt "team" from "modern"');
    expect(p.h.status("modern").protocolVersion).toBe("2026-07-28");
    expect(texts(p.session.added[0]!)).toContain("[user]\nDana leads Sales.");
    expect(record(p.session.added[0]!).description).toBe("Name a team lead.");
  });

  it("follows its prompt list changes through a subscriptions/listen stream", async () => {
    const p = await promptHost({ modern: { command: nodePath(), args: [PROMPT_SERVER_2026] } });
    await p.h.waitForTools(1, { server: "modern" });
    const connection = p.h.host.server("modern")!;
    const names = async () => (await listPrompts(connection, { maxAgeMs: 60_000 })).map((prompt) => prompt.name);
    expect(await names()).toEqual(["team"]); // now cached for a minute, unless the server announces a change
    await p.h.call("mcp__modern__add-prompt", { name: "retro" });
    // The change reaches the host on the listen stream; the next listing after it asks the server again.
    expect(
      await eventually(
        async () => {
          const now = await names();
          return now.includes("retro") ? now : undefined;
        },
        15_000,
        () => "the cached prompt list never changed",
      ),
    ).toEqual(["team", "retro"]);
  });
});

describe("switched off", () => {
  afterEach(stopAllHosts);

  it("a kernel without the prompts plugin has no prompt command and handles no prompt notifications", async () => {
    const kernel = createKernel({ disable: ["prompts"] });
    expect(kernel.commands.map((command) => command.name)).not.toContain("prompt");
    expect(kernel.hooks.clientCreated.taps.map((tap) => tap.name)).not.toContain("prompts");
    expect(createKernel().commands.map((command) => command.name)).toContain("prompt");
    expect(createKernel().hooks.clientCreated.taps.map((tap) => tap.name)).toContain("prompts");
  });

  it("needs a session to add messages to", async () => {
    const h = await startHost({ everything: everythingStdio() });
    const result = await runCommandLine(h.host.kernelInstance.commands, ["prompt", "everything", "simple-prompt"], piEnvironment(h));
    expect(result).toMatchObject({ exitCode: 1, output: "prompt: this surface has no conversation to add the messages to" });
  });
});
