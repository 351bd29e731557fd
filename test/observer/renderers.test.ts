/**
 * The MCP Observer UI's renderers, drawn the way Pi draws them: tool rows go
 * through Pi's own ToolExecutionComponent (the TUI's row, with its box and
 * image handling), messages through the renderer Pi calls. Everything is
 * rendered to text at fixed widths.
 */
import { initTheme, ToolExecutionComponent, type Theme } from "@earendil-works/pi-coding-agent";
import { visibleWidth } from "@earendil-works/pi-tui";
import { beforeAll, describe, expect, it } from "vitest";
import { createKernel } from "../../src/composition.ts";
import { STAGE, type KernelPlugin } from "../../src/kernel/kernel.ts";
import { observerClean, toolRendering, type ToolRendering } from "../../plugins/observer/pi.ts";
import { createRedactor } from "../../src/safety/text.ts";
import { promptMessageComponent, resourceUpdateComponent } from "../../plugins/observer/components.ts";

const SECRET = "settings-secret-4711";
const WIDTHS = [40, 80, 120];
/** What remains of a line once the theme's colours are gone. */
const plain = (line: string) => line.replace(/\x1b\[[0-9;:]*m/g, "").trimEnd();
/** Any terminal control left after the theme's SGR colours are removed. */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
/** A theme without colours, for message renderers. */
const noColour = {
  fg: (_color: string, text: string) => text,
  bg: (_color: string, text: string) => text,
  bold: (text: string) => text,
} as unknown as Theme;

let rendering: ToolRendering;
beforeAll(() => {
  initTheme("dark");
  rendering = toolRendering(createKernel(), () => createRedactor([SECRET]))!;
});

type Content = Record<string, unknown>[];

/** One tool row as Pi's TUI composes it. */
function row(
  args: Record<string, unknown>,
  { server = "everything", tool = "echo", piName = "mcp__everything__echo", fixed = false, renderers = rendering } = {},
) {
  const definition = {
    name: piName,
    label: `${server}: ${tool}`,
    description: "test tool",
    parameters: { type: "object" },
    execute: async () => ({ content: [], details: {} }),
    ...(fixed ? renderers.fixedTool(piName) : renderers.serverTool(server, tool, piName)),
  };
  const component = new ToolExecutionComponent(
    piName,
    "call-1",
    args,
    { showImages: false },
    definition as never,
    { requestRender() {} } as never,
    "/tmp",
  );
  component.setArgsComplete();
  component.markExecutionStarted();
  return {
    component,
    update(content: Content, details: Record<string, unknown> = {}, { isError = false, partial = false } = {}) {
      component.updateResult({ content, details, isError } as never, partial);
    },
    /** The row's non-blank lines at `width`, colours removed; every line is checked to fit. */
    lines(width: number, expanded = false): string[] {
      component.setExpanded(expanded);
      const raw = component.render(width);
      for (const line of raw) {
        expect(visibleWidth(line)).toBeLessThanOrEqual(width);
        expect(plain(line)).not.toMatch(CONTROL);
      }
      return raw
        .map(plain)
        .filter((line) => line.trim() !== "")
        .map((line) => line.trim());
    },
  };
}

describe("a server tool row", () => {
  it("collapsed: server and original tool names, argument preview, content counts and a text-backed state", () => {
    const r = row({ message: "hello world", times: 3, tags: ["a", "b"], options: { loud: true } });
    r.update(
      [
        { type: "text", text: "Echo: hello world" },
        { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
      ],
      { server: "everything", tool: "echo" },
    );
    // Pi's row box pads one column on each side: 78 columns of row at 80.
    expect(r.lines(80)).toEqual([
      'MCP everything › echo  message="hello world", times=3, tags=[2 items], option…',
      "✓ success · 1 text, 1 image",
    ]);
    expect(r.lines(120)).toEqual([
      'MCP everything › echo  message="hello world", times=3, tags=[2 items], options={1 key}',
      "✓ success · 1 text, 1 image",
    ]);
    expect(r.lines(40)).toEqual(['MCP everything › echo  message="hello…', "✓ success · 1 text, 1 image"]);
  });

  it("expanded: bounded structured arguments, model-visible text and stored-content metadata", () => {
    const long = "x".repeat(500);
    const many = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`k${i}`, i]));
    const r = row({ message: long, many });
    r.update(
      [
        { type: "text", text: "line one\nline two" },
        { type: "image", data: "A".repeat(400), mimeType: "image/png" },
      ],
      {
        structuredContent: { total: 3, items: [1, 2, 3] },
      },
    );
    const lines = r.lines(80, true);
    expect(lines).toContain("✓ success · 1 text, 1 image, structured content");
    expect(lines).toContain("arguments");
    expect(lines).toContain('"message":');
    expect(lines.join("\n")).toContain("x".repeat(60));
    expect(lines.join("\n")).toContain("… (500 characters)");
    // 40 lines of arguments at most, then a note of what was left out.
    expect(lines.join("\n")).toMatch(/… \d+ more lines/);
    expect(lines).toEqual(
      expect.arrayContaining(["output (model-visible)", "line one", "line two", "stored content", "image image/png, 300 B"]),
    );
    expect(lines.some((line) => line.startsWith("structured content: object with 2 keys"))).toBe(true);
    for (const width of WIDTHS) r.lines(width, true);
  });

  it("partial: progress replaces the row's state line instead of adding lines", () => {
    const r = row(
      { duration: 3, steps: 3 },
      { tool: "trigger-long-running-operation", piName: "mcp__everything__trigger-long-running-operation" },
    );
    r.update([{ type: "text", text: "progress 1/3" }], { progress: { progress: 1, total: 3 } }, { partial: true });
    const first = r.lines(80);
    expect(first).toEqual(["MCP everything › trigger-long-running-operation  duration=3, steps=3", "… running · progress 1/3 (33%)"]);
    r.update(
      [{ type: "text", text: "progress 2/3: halfway" }],
      { progress: { progress: 2, total: 3, message: "halfway" } },
      { partial: true },
    );
    const second = r.lines(80);
    expect(second).toEqual([
      "MCP everything › trigger-long-running-operation  duration=3, steps=3",
      "… running · progress 2/3 (67%): halfway",
    ]);
    expect(second.length).toBe(first.length);
    r.update([{ type: "text", text: "Long running operation completed." }]);
    expect(r.lines(80)).toEqual(["MCP everything › trigger-long-running-operation  duration=3, steps=3", "✓ success · 1 text"]);
  });

  it("error: a failure with its first line collapsed and the whole error expanded", () => {
    const r = row({ message: "x" });
    r.update([{ type: "text", text: "everything/echo failed: MCP error -32603: boom\nsecond line" }], {}, { isError: true });
    expect(r.lines(80)).toEqual(['MCP everything › echo  message="x"', "✗ failure · everything/echo failed: MCP error -32603: boom"]);
    const expanded = r.lines(80, true);
    expect(expanded).toEqual(
      expect.arrayContaining(["error (model-visible)", "everything/echo failed: MCP error -32603: boom", "second line"]),
    );
    for (const width of WIDTHS) r.lines(width, true);
  });

  it("cancelled: a stopped call (ours or Pi's abort) reads as cancelled, not failed", () => {
    const r = row({ message: "x" });
    r.update([{ type: "text", text: "everything/echo was cancelled" }], {}, { isError: true });
    expect(r.lines(80)).toEqual(['MCP everything › echo  message="x"', "⊘ cancelled · everything/echo was cancelled"]);
    r.update([{ type: "text", text: "Operation aborted" }], {}, { isError: true });
    expect(r.lines(80)).toEqual(['MCP everything › echo  message="x"', "⊘ cancelled · Operation aborted"]);
  });

  it("with a Result Spill path: noted collapsed, the path shown expanded", () => {
    const r = row({ size: 100000 }, { server: "big", tool: "dump", piName: "mcp__big__dump" });
    const text = `${"row\n".repeat(300)}\n[output truncated to Pi's limit; the complete 400000-character output is in /agent/pi-mcp/sessions/s1/spill/big-dump.txt]`;
    r.update([{ type: "text", text }], { spillPath: "/agent/pi-mcp/sessions/s1/spill/big-dump.txt" });
    expect(r.lines(80)).toEqual(["MCP big › dump  size=100000", "✓ success · 1 text · truncated, complete output saved"]);
    const expanded = r.lines(80, true);
    expect(expanded).toEqual(expect.arrayContaining(["result spill (complete output)", "/agent/pi-mcp/sessions/s1/spill/big-dump.txt"]));
    expect(expanded.join("\n")).toContain("… 102 more lines (the complete output is in the result spill file)");
    for (const width of WIDTHS) r.lines(width, true);
  });

  it("with an output-schema failure: a warning, and the failure shown expanded", () => {
    const r = row({}, { tool: "get-structured-content", piName: "mcp__everything__get-structured-content" });
    r.update(
      [
        { type: "text", text: '[structured content]\n{"temperature": "hot"}' },
        { type: "text", text: "[warning: structured content: /temperature must be number]" },
      ],
      {
        structuredContent: { temperature: "hot" },
        outputSchemaError: "structured content: /temperature must be number",
      },
    );
    expect(r.lines(80)).toEqual([
      "MCP everything › get-structured-content",
      "! warning · output-schema failure · 2 text, structured content",
    ]);
    const expanded = r.lines(80, true);
    expect(expanded).toEqual(expect.arrayContaining(["output schema failure", "structured content: /temperature must be number"]));
  });

  it("leaves images to Pi: the result keeps its image content for Pi's own image rendering", () => {
    const r = row({});
    const content = [{ type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }];
    r.update(content);
    expect(r.lines(80)).toEqual(["MCP everything › echo", "✓ success · 1 image"]);
    expect(content).toEqual([{ type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }]);
  });

  it("strips terminal controls from names, arguments, results and errors; the result itself is untouched", () => {
    const hostile = "esc\u001b[31mred\u001b[0m";
    const text =
      "red:\u001b[31mRED\u001b[0m osc:\u001b]0;owned-title\u0007 c1:\u009b1mBOLD\u009b0m nel:\u0085 bs:abc\b\b\bXYZ clear:\u001b[2J\u001b[H end";
    const r = row({ note: "\u001b]0;title\u0007hi" }, { server: "names", tool: hostile, piName: "mcp__names__esc_31mred_0m" });
    const content = [{ type: "text", text }];
    r.update(content);
    for (const width of WIDTHS) {
      r.lines(width); // no control characters, every line fits
      r.lines(width, true);
    }
    expect(r.lines(120)[0]).toBe('MCP names › escred  note="hi"');
    expect(r.lines(120, true)).toContain("red:RED osc: c1:BOLD nel: bs:abcXYZ clear: end");
    expect(content[0]!.text).toBe(text);
    r.update([{ type: "text", text: `names/x failed: \u001b[1mbad\u001b[0m\u0007` }], {}, { isError: true });
    expect(r.lines(80)[1]).toBe("✗ failure · names/x failed: bad");
  });

  it("masks an exact secret from settings in observer copy, while the model-visible result keeps it", () => {
    const r = row({ message: `token ${SECRET}` });
    const content = [{ type: "text", text: `Echo: token ${SECRET}` }];
    r.update(content);
    const all = [...r.lines(80), ...r.lines(80, true)].join("\n");
    expect(all).not.toContain(SECRET);
    expect(all).toContain('message="token ‹redacted›"');
    expect(all).toContain("Echo: token ‹redacted›");
    expect(content[0]!.text).toBe(`Echo: token ${SECRET}`);
  });

  it("redacts before it cuts: no part of a secret survives a preview or a bound", () => {
    const r = row({ short: `${"y".repeat(45)}${SECRET}`, long: `${"z".repeat(185)}${SECRET}`, [SECRET]: 1 });
    r.update([{ type: "text", text: `${"w".repeat(185)}${SECRET}` }], {}, { isError: true });
    const all = [...r.lines(200), ...r.lines(200, true)].join("\n");
    expect(all).not.toContain(SECRET.slice(0, 12));
    expect(all).toContain("‹redacted›=1");
  });
});

describe("a fixed resource tool row", () => {
  it("names the server and the MCP method, and counts what was listed", () => {
    const r = row({}, { piName: "list_mcp_resources", fixed: true });
    r.update([{ type: "text", text: "everything: test://a\neverything: test://b\ndocs: file:///c" }], {
      resources: { everything: [{ uri: "test://a" }, { uri: "test://b" }], docs: [{ uri: "file:///c" }] },
    });
    expect(r.lines(80)).toEqual(["MCP all servers › resources/list", "✓ success · 3 resources from 2 servers"]);
    expect(r.lines(80, true)).toEqual(expect.arrayContaining(["stored content", "docs: 1 resource", "everything: 2 resources"]));
    const read = row({ server: "everything", uri: "test://static/resource/1" }, { piName: "read_mcp_resource", fixed: true });
    read.update([{ type: "text", text: "[resource test://static/resource/1 from everything, text/plain]\nhello" }], {
      server: "everything",
      uri: "test://static/resource/1",
    });
    expect(read.lines(120)).toEqual([
      'MCP everything › resources/read  server="everything", uri="test://static/resource/1"',
      "✓ success · 1 text",
    ]);
  });
});

describe("the render hook", () => {
  it("lets a later tap refine the row the observer built", () => {
    const plugin: KernelPlugin = {
      name: "acme-rows",
      apply(kernel) {
        kernel.hooks.render.tap({ name: "acme-rows", stage: STAGE.FALLBACK }, (model, context) => {
          if (context.expanded) model.sections.push({ title: "acme", lines: [`\u001b[31mseen ${context.tool}\u001b[0m`] });
          model.summary += " · acme";
          return model;
        });
      },
    };
    const custom = toolRendering(createKernel({ plugins: [plugin] }), () => createRedactor([]))!;
    const r = row({}, { renderers: custom });
    r.update([{ type: "text", text: "ok" }]);
    expect(r.lines(80)).toEqual(["MCP everything › echo", "✓ success · 1 text · acme"]);
    expect(r.lines(80, true)).toEqual(expect.arrayContaining(["acme", "seen mcp__everything__echo"]));
  });

  it("gives no renderers and no Pi part when the observer plugin is switched off (Pi's default rows)", async () => {
    const parts = await createKernel({ disable: ["observer"] }).piParts();
    expect(parts.some((part) => part.toolRendering || part.register || part.observeSession)).toBe(false);
    const [observer] = await createKernel().piParts();
    expect(observer?.toolRendering).toBe(toolRendering);
  });
});

describe("message renderers", () => {
  const clean = observerClean(createRedactor([SECRET]));
  const lines = (component: { render(width: number): readonly string[] } | undefined, width: number) => {
    expect(component).toBeDefined();
    const raw = component!.render(width);
    for (const line of raw) {
      expect(visibleWidth(line)).toBeLessThanOrEqual(width);
      expect(line).not.toMatch(CONTROL);
    }
    return raw.map((line) => line.trim()).filter(Boolean);
  };
  const prompt = {
    version: 1,
    server: "everything",
    prompt: "args-prompt",
    arguments: { city: "Paris", token: SECRET },
    messages: [
      { role: "user", text: "What is the weather in Paris?\n\u001b[31msecond\u001b[0m line", images: [] },
      { role: "assistant", text: "Let me look.", images: [{ mimeType: "image/png", bytes: 2048 }] },
    ],
  };

  it("a prompt shows its server, prompt name, roles, text and image metadata", () => {
    expect(lines(promptMessageComponent(prompt, noColour, clean, { expanded: false, outputPad: 1 }), 80)).toEqual([
      'MCP prompt everything › args-prompt  city="Paris", token="‹redacted›"',
      "2 messages · roles user, assistant · 1 image",
      "What is the weather in Paris?",
    ]);
    expect(lines(promptMessageComponent(prompt, noColour, clean, { expanded: true, outputPad: 1 }), 80)).toEqual([
      'MCP prompt everything › args-prompt  city="Paris", token="‹redacted›"',
      "2 messages · roles user, assistant · 1 image",
      "[user]",
      "What is the weather in Paris?",
      "second line",
      "[assistant]",
      "Let me look.",
      "image image/png, 2.0 KB",
    ]);
    for (const width of WIDTHS) lines(promptMessageComponent(prompt, noColour, clean, { expanded: true, outputPad: 1 }), width);
  });

  it("a prompt record of an unknown version is left to Pi's default (content) rendering", () => {
    expect(promptMessageComponent({ ...prompt, version: 2 }, noColour, clean, { expanded: false })).toBeUndefined();
    expect(promptMessageComponent(undefined, noColour, clean, { expanded: false })).toBeUndefined();
  });

  it("a Resource Update Notice shows server and URI and says the resource stays unread", () => {
    const notice = { version: 1, server: "everything", uri: "test://static/resource/\u001b[2J1" };
    expect(lines(resourceUpdateComponent(notice, noColour, clean, { expanded: false, outputPad: 1 }), 80)).toEqual([
      "MCP resource update everything › test://static/resource/1",
      "The resource changed. It stays unread until the agent reads it",
      "(read_mcp_resource).",
    ]);
    for (const width of WIDTHS) lines(resourceUpdateComponent(notice, noColour, clean, { expanded: true }), width);
    expect(resourceUpdateComponent({ server: "x" }, noColour, clean, { expanded: false })).toBeUndefined();
  });
});
