/**
 * The two custom messages pi-mcp adds to a Pi session, an expanded prompt
 * (`pi-mcp.prompt`, plugins/prompts) and a Resource Update Notice
 * (`pi-mcp.resource-update`, plugins/resources), made in-process by the
 * plugins against a fixture server and stored in a real Pi session file
 * (Pi's SessionManager, as src/pi/services.ts hands them to Pi):
 *
 * - their content is their durable representation: everything a reader needs
 *   (server, prompt, roles, text, images; server, URI, "not read") is in the
 *   content, and Pi's HTML export (`pi --export`, a real Pi 1.6) keeps exactly
 *   that content;
 * - the observer's renderers draw them (and the fixed resource tools' rows)
 *   from what is stored: drawing asks no server anything, so no prompt is run
 *   again and no resource is read.
 */
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CustomMessageEntry, ExtensionAPI, Theme } from "@earendil-works/pi-coding-agent";
import { SessionManager } from "@earendil-works/pi-coding-agent";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ObserverPlugin } from "../../plugins/observer/index.ts";
import { observerPiPart } from "../../plugins/observer/pi.ts";
import { PromptsPlugin } from "../../plugins/prompts/index.ts";
import { ResourcesPlugin } from "../../plugins/resources/index.ts";
import { ResultMappingPlugin } from "../../plugins/result-mapping/index.ts";
import { MESSAGE_TYPES, RESOURCE_TOOLS } from "../../src/kernel/pi-part.ts";
import type { FixedTool, SessionServices } from "../../src/kernel/services.ts";
import type { ToolOutcome } from "../../src/kernel/services.ts";
import { createRedactor } from "../../src/safety/text.ts";
import { NODE, piCli } from "../e2e/harness/pi.ts";
import { eventWaiter } from "../helpers/wait.ts";
import { runProcess } from "../helpers/tmp.ts";
import { pluginHost, type PluginTestHost } from "./harness.ts";

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const noColour = {
  fg: (_color: string, text: string) => text,
  bg: (_color: string, text: string) => text,
  bold: (text: string) => text,
} as unknown as Theme;

/** Pi's session as the plugins reach it, over a real SessionManager (what src/pi/services.ts does through Pi's API). */
function piSession(manager: SessionManager, changed: () => void): SessionServices {
  const store = (customType: string, content: string | readonly unknown[], details?: Record<string, unknown>) => {
    manager.appendCustomMessageEntry(customType, content as never, true, details);
    changed();
  };
  return {
    append: (customType, data) => void manager.appendCustomEntry(customType, data),
    entries: (customType) =>
      manager
        .getBranch()
        .filter((entry) => entry.type === "custom" && entry.customType === customType)
        .map((entry) => (entry as { data?: unknown }).data),
    // Pi stores a next-turn message when the turn starts, as the same custom_message entry.
    queueMessage: (message) => store(message.customType, message.content, message.details),
    addMessage: (message) => store(message.customType, [...message.content], message.details),
    onBranchChange: () => () => {},
  };
}

let root: string;
let manager: SessionManager;
let h: PluginTestHost;
const tools = new Map<string, FixedTool>();
const stored = eventWaiter();

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "pi-mcp-messages-"));
  await mkdir(join(root, "sessions"));
  manager = SessionManager.create(root, join(root, "sessions"));
  manager.appendMessage({ role: "user", content: [{ type: "text", text: "start" }], timestamp: Date.now() }); // the file exists from here on
  h = await pluginHost(
    [new PromptsPlugin(), new ResourcesPlugin(), new ResultMappingPlugin(), new ObserverPlugin()],
    {
      docs: {
        era: "legacy",
        options: { capabilities: { prompts: {}, resources: { subscribe: true } } },
        build(server) {
          server.server.setRequestHandler("prompts/list", () => ({
            prompts: [{ name: "review", description: "Reviews a file", arguments: [{ name: "file", required: true }] }],
          }));
          server.server.setRequestHandler("prompts/get", (request) => ({
            messages: [
              { role: "user", content: { type: "text", text: `Review ${request.params.arguments?.file}.` } },
              { role: "user", content: { type: "image", data: PNG, mimeType: "image/png" } },
              { role: "assistant", content: { type: "text", text: "Looking at it." } },
            ],
          }));
          server.server.setRequestHandler("resources/list", () => ({ resources: [{ uri: "note://a", name: "a" }] }));
          server.server.setRequestHandler("resources/read", (request) => ({
            contents: [{ uri: request.params.uri, mimeType: "text/plain", text: "note a" }],
          }));
          server.server.setRequestHandler("resources/subscribe", () => ({}));
          server.server.setRequestHandler("resources/unsubscribe", () => ({}));
        },
      },
    },
    {
      services: {
        session: piSession(manager, stored.notify),
        piTools: { define: (tool) => void tools.set(tool.name, tool), setActive: () => {} },
      },
    },
  );
  await h.waitForState("docs", "connected");
  expect((await h.command("prompt docs review --arg file=a.ts")).exitCode).toBe(0);
  expect((await h.command("subscribe docs note://a")).exitCode).toBe(0);
  await h.server("docs").instance().server.sendResourceUpdated({ uri: "note://a" });
  await stored.until(
    () => messages(MESSAGE_TYPES.resourceUpdate).length === 1,
    10_000,
    () => "no Resource Update Notice was stored",
  );
});

afterAll(async () => {
  await h?.stop();
  await rm(root, { recursive: true, force: true });
});

function messages(customType: string): CustomMessageEntry[] {
  return manager
    .getEntries()
    .filter((entry): entry is CustomMessageEntry => entry.type === "custom_message" && entry.customType === customType);
}

/** The text of stored content, its images as `[image <mimeType>]`. */
function contentText(content: CustomMessageEntry["content"]): string {
  if (typeof content === "string") return content;
  return content.map((item) => (item.type === "text" ? item.text : `[image ${item.mimeType}]`)).join("\n");
}

const PROMPT_TEXT = [
  '[MCP prompt "review" from server "docs" (file="a.ts"): 3 messages, run by the person with /mcp prompt]',
  "[user]",
  "Review a.ts.",
  "[user]",
  "[image image/png]",
  "[assistant]",
  "Looking at it.",
].join("\n");
const NOTICE_TEXT =
  '[MCP resource update] Server "docs" reports that resource note://a changed. It has not been read: use read_mcp_resource if you need its new content.';

describe("the stored messages", () => {
  it("carry their whole representation in their content: a prompt's provenance, roles, text and images; a notice's server, URI and 'not read'", () => {
    const [prompt] = messages(MESSAGE_TYPES.prompt);
    const [notice] = messages(MESSAGE_TYPES.resourceUpdate);
    expect(contentText(prompt!.content)).toBe(PROMPT_TEXT);
    expect(prompt!.content).toContainEqual({ type: "image", data: PNG, mimeType: "image/png" });
    expect(prompt!.display).toBe(true);
    expect(contentText(notice!.content)).toBe(NOTICE_TEXT);
    expect(notice!.details).toEqual({ version: 1, server: "docs", uri: "note://a" });
  });

  it("are exported to HTML by Pi as that content (pi --export, Pi 1.6)", { timeout: 60_000 }, async () => {
    const out = join(root, "export.html");
    const home = join(root, "home");
    await mkdir(home, { recursive: true });
    const env = { ...process.env, HOME: home, PI_CODING_AGENT_DIR: join(home, ".pi/agent"), PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1" };
    const result = await runProcess(NODE, [piCli("1.6"), "--export", manager.getSessionFile()!, out], {
      cwd: root,
      env,
      timeoutMs: 60_000,
    });
    expect(result.code, result.stderr).toBe(0);
    const html = await readFile(out, "utf8");
    const data = JSON.parse(Buffer.from(/id="session-data"[^>]*>([^<]+)</.exec(html)![1]!.trim(), "base64").toString("utf8")) as {
      entries: CustomMessageEntry[];
    };
    const exported = (customType: string) =>
      data.entries.filter((entry) => entry.type === "custom_message" && entry.customType === customType).map((entry) => entry.content);
    expect(exported(MESSAGE_TYPES.prompt)).toEqual(messages(MESSAGE_TYPES.prompt).map((entry) => entry.content));
    expect(exported(MESSAGE_TYPES.resourceUpdate)).toEqual([NOTICE_TEXT]);
    expect(exported(MESSAGE_TYPES.prompt).map(contentText)).toEqual([PROMPT_TEXT]);
  });
});

/** What a rendered component draws at 80 columns. */
function lines(component: unknown): string[] {
  return (component as { render(width: number): string[] }).render(80);
}

describe("the observer's renderers", () => {
  it("draw the messages and the resource tools' rows from what is stored, asking no server anything", async () => {
    const outcome: ToolOutcome = await tools.get(RESOURCE_TOOLS.read)!.execute({ server: "docs", uri: "note://a" }, {});
    const server = h.server("docs");
    const sentBefore = server.received.length;
    const entriesBefore = manager.getEntries().length;

    const renderers = new Map<string, (message: unknown, options: { expanded: boolean }, theme: Theme) => unknown>();
    const pi = { registerMessageRenderer: (type: string, render: never) => void renderers.set(type, render) } as unknown as ExtensionAPI;
    observerPiPart.register!(pi, () => createRedactor([]));
    const drawn: string[] = [];
    for (const entry of [...messages(MESSAGE_TYPES.prompt), ...messages(MESSAGE_TYPES.resourceUpdate)]) {
      for (const expanded of [false, true]) {
        drawn.push(...lines(renderers.get(entry.customType)!(entry, { expanded }, noColour)));
      }
    }
    const rows = observerPiPart.toolRendering!(h.kernel, () => createRedactor([])).fixedTool(RESOURCE_TOOLS.read);
    const args = { server: "docs", uri: "note://a" };
    for (const expanded of [false, true]) {
      drawn.push(...lines(rows.renderCall!(args, noColour, { expanded } as never)));
      const result = rows.renderResult!({ ...outcome }, { expanded, isPartial: false }, noColour, { args, expanded } as never);
      drawn.push(...lines(result));
    }
    const screen = drawn.join("\n");
    expect(screen).toContain("MCP prompt docs › review");
    expect(screen).toContain("note://a");
    expect(screen).toContain("note a");

    expect(server.received.slice(sentBefore)).toEqual([]);
    expect(server.methods()).toEqual(expect.arrayContaining(["prompts/get", "resources/read"])); // what the command and the tool asked, once each
    expect(server.methods().filter((method) => method === "prompts/get")).toHaveLength(1);
    expect(server.methods().filter((method) => method === "resources/read")).toHaveLength(1);
    expect(manager.getEntries()).toHaveLength(entriesBefore);
  });
});
