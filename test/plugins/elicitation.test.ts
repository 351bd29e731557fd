/**
 * The elicitation plugin in-process (with the result mappers, to read tool
 * results as text; fixture servers over the SDK's in-memory transport pair):
 *
 * - Always declared: `elicitation: { form: { applyDefaults: true }, url: {} }`.
 * - A server's request is answered through Pi's dialogs only during the
 *   foreground tool call that caused it, in a session with a UI; otherwise it
 *   is declined at once (no UI, no tool call, a call that is not interactive).
 * - Form mode: one dialog per field (string → input, enum → select, boolean
 *   → confirm, integer → input, checked); an empty answer keeps the default.
 * - URL mode: the URL and its site are shown; the page is opened only when
 *   the person says yes, and only an http(s) URL ever reaches the opener.
 */
import { fromJsonSchema, inputRequired, inputResponse } from "@modelcontextprotocol/server";
import { afterEach, describe, expect, it } from "vitest";
import { ElicitationPlugin } from "../../plugins/elicitation/index.ts";
import { ResultMappingPlugin } from "../../plugins/result-mapping/index.ts";
import { textOf } from "../helpers/host.ts";
import { fakeUi, person } from "../features/interactive-helpers.ts";
import { type FixtureServer, pluginHost, stopAllHosts } from "./harness.ts";

afterEach(stopAllHosts);

const FORM = {
  message: "Who are you?",
  requestedSchema: {
    type: "object" as const,
    properties: {
      name: { type: "string" as const, title: "Name", minLength: 1 },
      age: { type: "integer" as const, title: "Age", minimum: 0, maximum: 150, default: 30 },
      subscribe: { type: "boolean" as const, title: "Subscribe", default: false },
      color: { type: "string" as const, title: "Color", enum: ["red", "green", "blue"], default: "green" },
    },
    required: ["name"],
  },
};

/** `ask` asks the person with FORM (an input request: both eras); `open_page` {url} asks to open a page (2025 era). */
function asker(era: "legacy" | "modern"): FixtureServer {
  return {
    era,
    options: { capabilities: { tools: {} } },
    build(server) {
      server.registerTool("ask", {}, (ctx) => {
        const answer = inputResponse(ctx.mcpReq.inputResponses, "person");
        if (answer.kind === "elicit")
          return { content: [{ type: "text", text: JSON.stringify({ action: answer.action, content: answer.content }) }] };
        return inputRequired({ inputRequests: { person: inputRequired.elicit(FORM) } });
      });
      server.registerTool(
        "open_page",
        { inputSchema: fromJsonSchema({ type: "object", properties: { url: { type: "string" } }, required: ["url"] }) },
        async (args, ctx) => {
          const { url } = args as { url: string };
          const result = await ctx.mcpReq.elicitInput({ mode: "url", url, message: "Please sign in.", elicitationId: "page-1" });
          return { content: [{ type: "text", text: result.action }] };
        },
      );
    },
  };
}

describe.each(["legacy", "modern"] as const)("a %s-era server", (era) => {
  it("asks the person field by field during an interactive tool call and gets the answers, defaults kept", async () => {
    const ui = fakeUi(person({ Name: "Ada" }));
    const h = await pluginHost([new ElicitationPlugin(), new ResultMappingPlugin()], { docs: asker(era) }, { services: { ui } });
    await h.waitForTools(2, { server: "docs" });
    const answer = JSON.parse(textOf(await h.call("mcp__docs__ask", {}, { interactive: true })));
    expect(answer).toEqual({ action: "accept", content: { name: "Ada", age: 30, subscribe: true, color: "green" } });
    expect(ui.dialogs.map((dialog) => dialog.method)).toEqual(["confirm", "input", "input", "confirm", "select"]);
    expect(ui.dialogs[0]).toMatchObject({ title: 'MCP server "docs" asks for information', text: expect.stringContaining("Who are you?") });
    expect(ui.dialogs[4]!.options).toEqual(["green (default)", "red", "blue"]);
  });

  it("declines at once where no person can answer: no UI, or a call that is not interactive", async () => {
    const ui = fakeUi(person({ Name: "Ada" }));
    const withUi = await pluginHost([new ElicitationPlugin(), new ResultMappingPlugin()], { docs: asker(era) }, { services: { ui } });
    await withUi.waitForTools(2, { server: "docs" });
    expect(JSON.parse(textOf(await withUi.call("mcp__docs__ask", {}, { interactive: false })))).toMatchObject({ action: "decline" });
    expect(ui.dialogs).toEqual([]);
    expect(withUi.host.server("docs")!.log.text()).toContain("elicitation declined: the tool call that caused it is not interactive");
    const noUi = await pluginHost([new ElicitationPlugin(), new ResultMappingPlugin()], { docs: asker(era) });
    await noUi.waitForTools(2, { server: "docs" });
    expect(JSON.parse(textOf(await noUi.call("mcp__docs__ask", {}, { interactive: true })))).toMatchObject({ action: "decline" });
    expect(noUi.host.server("docs")!.log.text()).toContain("elicitation declined: no person can answer here");
  });
});

describe("a 2025-era server", () => {
  it("asking outside a tool call is declined without a dialog", async () => {
    const ui = fakeUi(person());
    const h = await pluginHost([new ElicitationPlugin()], { docs: asker("legacy") }, { services: { ui } });
    await h.waitForTools(2, { server: "docs" });
    const result = await h.server("docs").instance().server.elicitInput(FORM);
    expect(result.action).toBe("decline");
    expect(ui.dialogs).toEqual([]);
  });

  it("URL mode: shows the page and its site, opens it only when the person says yes", async () => {
    const opened: string[] = [];
    const ui = fakeUi((dialog) => dialog.method === "confirm");
    const plugin = new ElicitationPlugin({ openUrl: async (url) => void opened.push(url) });
    const h = await pluginHost([plugin, new ResultMappingPlugin()], { docs: asker("legacy") }, { services: { ui } });
    await h.waitForTools(2, { server: "docs" });
    expect(textOf(await h.call("mcp__docs__open_page", { url: "https://login.example.test/start" }, { interactive: true }))).toBe("accept");
    expect(ui.dialogs[0]).toMatchObject({
      method: "confirm",
      title: 'MCP server "docs" asks you to open a web page',
      text: expect.stringContaining("Site: login.example.test"),
    });
    expect(opened).toEqual(["https://login.example.test/start"]);
    ui.script(() => false);
    expect(textOf(await h.call("mcp__docs__open_page", { url: "https://login.example.test/again" }, { interactive: true }))).toBe(
      "decline",
    );
    expect(opened).toHaveLength(1);
  });

  it("URL mode: a URL that is not http(s) is declined before anything is shown or opened", async () => {
    const opened: string[] = [];
    const ui = fakeUi(() => true);
    const h = await pluginHost(
      [new ElicitationPlugin({ openUrl: async (url) => void opened.push(url) }), new ResultMappingPlugin()],
      { docs: asker("legacy") },
      { services: { ui } },
    );
    await h.waitForTools(2, { server: "docs" });
    expect(textOf(await h.call("mcp__docs__open_page", { url: "file:///etc/passwd" }, { interactive: true }))).toBe("decline");
    expect(ui.dialogs).toEqual([]);
    expect(opened).toEqual([]);
    expect(ui.notices).toHaveLength(1);
  });
});
