// Elicitation through OUR host (the real kernel and plugins) with stand-in dialogs:
// form fields by type, defaults, checks, decline and cancel, URL mode, scoping to
// the foreground call, multi-round input requests (2026-07-28), and the switch that
// turns the feature off.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKernel } from "../../src/composition.ts";
import type { HostServices, ModelService, UiService } from "../../src/kernel/services.ts";
import { ElicitationPlugin } from "../../plugins/elicitation/index.ts";
import { everythingStdio, fixtureServer, startHost, stopAllHosts, textOf, until, type TestHost } from "../helpers/host.ts";
import { backgroundOutcome, fakeUi, handlerSpy, person } from "./interactive-helpers.ts";

// Hosts are shared within a describe block (each test scripts the dialogs anew) and stopped at the end.
afterAll(stopAllHosts);

const json = (outcome: { content: readonly { type: string }[] }) => JSON.parse(textOf(outcome as never));

describe.each(["both", "legacy"])("form elicitation (fixture era: %s)", (era) => {
  const ui = fakeUi(person());
  const model: ModelService = {
    complete: async (request) => ({
      model: "m",
      content: [{ type: "text", text: `echo: ${JSON.stringify(request.messages[0]!.content)}` }],
      stopReason: "endTurn",
    }),
  };
  // Mutable so one test can take the UI away (as in print mode) without another host.
  const services: { ui?: UiService; model: ModelService } = { ui, model };
  let h: TestHost;
  beforeAll(async () => {
    h = await startHost({ interactive: fixtureServer("interactive", { FIXTURE_ERA: era }) }, { services: services as HostServices });
    await h.waitForTools(1, { server: "interactive" });
  });
  const ask = (interactive = true) => h.call("mcp__interactive__ask_person", {}, { interactive });

  it("asks field by field with Pi's dialogs (string → input, integer → input, boolean → confirm, enum → select) and applies defaults", async () => {
    ui.script(person({ Name: "Ada" }));
    const answer = json(await ask());
    expect(answer).toMatchObject({ action: "accept", content: { name: "Ada", age: 30, subscribe: true, color: "green" } });
    expect(ui.dialogs.map((dialog) => dialog.method)).toEqual(["confirm", "input", "input", "confirm", "select"]);
    expect(ui.dialogs[0]).toMatchObject({
      title: 'MCP server "interactive" asks for information',
      text: expect.stringContaining("Who are you?"),
    });
    expect(ui.dialogs[0]!.text).toContain("Fields: Name (required), Age, Subscribe, Color");
    expect(ui.dialogs[2]).toMatchObject({ title: '"interactive" asks: Age', text: "empty keeps the default: 30" });
    expect(ui.dialogs[3]!.text).toContain("(Default: no.)");
    expect(ui.dialogs[4]!.options).toEqual(["green (default)", "red", "blue"]);
  });

  it("asks again when an answer does not fit the field, and parses numbers", async () => {
    // Age gets three tries: "old", "151" and "4.5" do not fit; so the request is cancelled.
    ui.script(person({ Name: ["", "Ada"], Age: ["old", "151", "4.5", "42"] }));
    expect(json(await ask())).toMatchObject({ action: "cancel" });
    const titles = ui.dialogs.filter((dialog) => dialog.method === "input").map((dialog) => dialog.title);
    expect(titles).toEqual([
      '"interactive" asks: Name (required)',
      '"interactive" asks: Name (required) [an answer is required, try again]',
      '"interactive" asks: Age',
      '"interactive" asks: Age [not a number, try again]',
      '"interactive" asks: Age [must be at most 150, try again]',
    ]);
    ui.script(person({ Name: "Ada", Age: ["4.5", " 42 "] }));
    expect(json(await ask()).content.age).toBe(42);
  });

  it("declines when the person says no, and cancels when a dialog is dismissed", async () => {
    ui.script((dialog) => (dialog.method === "confirm" ? false : ""));
    expect(json(await ask())).toMatchObject({ action: "decline" });
    expect(ui.dialogs).toHaveLength(1);
    ui.script((dialog) => (dialog.method === "confirm" ? true : undefined));
    expect(json(await ask())).toMatchObject({ action: "cancel" });
  });

  it("declines at once, with no dialog, where no person can answer: a call that is not interactive, or no UI", async () => {
    ui.script(person());
    expect(json(await ask(false)).action).toBe("decline");
    expect(ui.dialogs).toEqual([]);
    expect(h.host.server("interactive")!.log.text()).toContain("elicitation declined: the tool call that caused it is not interactive");
    delete services.ui;
    try {
      const started = Date.now();
      const answer = json(await ask());
      expect(answer.action).toBe("decline");
      expect(answer.elapsedMs).toBeLessThan(1_000);
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(h.host.server("interactive")!.log.text()).toContain("elicitation declined: no person can answer here");
    } finally {
      services.ui = ui;
    }
  });

  it("closes its dialog and cancels when the tool call is aborted", async () => {
    const signals: (AbortSignal | undefined)[] = [];
    ui.script((dialog, signal) => {
      signals.push(signal);
      if (dialog.method === "confirm") return true;
      return new Promise((resolve) => signal?.addEventListener("abort", () => resolve(undefined), { once: true }));
    });
    const controller = new AbortController();
    const call = h.call("mcp__interactive__ask_person", {}, { interactive: true, signal: controller.signal });
    await until(() => ui.dialogs.length === 2, 15_000);
    controller.abort();
    await expect(call).rejects.toThrow(/cancelled/);
    expect(signals[1]?.aborted).toBe(true);
  });

  it("runs several input rounds in one call (person, then model) and stops an endless one after ten rounds", async () => {
    ui.script(person({ word: "lantern" }));
    const result = json(await h.call("mcp__interactive__two_rounds", {}, { interactive: true }));
    expect(result.person).toEqual({ action: "accept", content: { word: "lantern" } });
    expect(result.model.content.text).toContain("Use the word lantern.");
    const endless = h.call("mcp__interactive__endless_rounds", {}, { interactive: true });
    // 2026-07-28: the SDK stops after inputRequired.maxRounds (10) and the call fails; the 2025 shim is bounded by the server.
    if (era === "both") {
      await expect(endless).rejects.toThrow(/still required input after 10 rounds/);
      expect(ui.dialogs.filter((dialog) => dialog.text?.includes("Round ")).length).toBe(10);
    } else await expect(endless).resolves.toBeDefined();
  });
});

describe("URL elicitation and scope", () => {
  const opened: string[] = [];
  const ui = fakeUi(person());
  const spy = handlerSpy();
  let h: TestHost;
  beforeAll(async () => {
    const kernel = createKernel({
      disable: ["elicitation"],
      plugins: [spy.plugin, new ElicitationPlugin({ openUrl: async (url) => void opened.push(url) })],
    });
    h = await startHost(
      { legacy: fixtureServer("interactive", { FIXTURE_ERA: "legacy" }), modern: fixtureServer("interactive") },
      { kernel, services: { ui } },
    );
    await h.waitForTools(1, { server: "legacy" });
    await h.waitForTools(1, { server: "modern" });
  });

  it("shows the URL and its site, opens it only after a yes, and reports the server's completion notice", async () => {
    const answers = [false, true];
    ui.script((dialog) => (dialog.method === "confirm" ? answers.shift() : undefined));
    opened.length = 0;
    const url = "https://login.example.com/start?session=abc";
    expect(json(await h.call("mcp__legacy__open_page", { url }, { interactive: true })).action).toBe("decline");
    expect(opened).toEqual([]);
    expect(json(await h.call("mcp__legacy__open_page", { url }, { interactive: true })).action).toBe("accept");
    expect(opened).toEqual([url]);
    expect(ui.dialogs[1]).toMatchObject({ method: "confirm", title: 'MCP server "legacy" asks you to open a web page' });
    expect(ui.dialogs[1]!.text).toContain("Please sign in on the page.");
    expect(ui.dialogs[1]!.text).toContain(url);
    expect(ui.dialogs[1]!.text).toContain("Site: login.example.com");
    await until(() => ui.notices.length > 0, 15_000);
    expect(ui.notices[0]).toContain(`the web page you opened (${url}) reports that it is done`);
  });

  it("works over 2026-07-28 input requests too, and never opens what is not http(s)", async () => {
    ui.script((dialog) => dialog.method === "confirm");
    opened.length = 0;
    expect(json(await h.call("mcp__modern__open_page", { url: "https://example.com/a" }, { interactive: true })).action).toBe("accept");
    expect(json(await h.call("mcp__modern__open_page", { url: "file:///etc/passwd" }, { interactive: true })).action).toBe("decline");
    expect(opened).toEqual(["https://example.com/a"]);
    expect(ui.dialogs).toHaveLength(1);
  });

  it("declines a request from background work (outside any tool call) without a dialog", async () => {
    ui.script(person());
    await h.call("mcp__legacy__background", { kind: "elicitation", delayMs: 500 }, { interactive: true });
    expect(JSON.parse(await backgroundOutcome(h, "legacy"))).toEqual({ action: "decline" });
    expect(ui.dialogs).toEqual([]);
  });

  it("shows one request's dialogs at a time", async () => {
    spy.received.length = 0;
    // The first dialog stays open until the other server's request has reached the host too.
    const bothArrived = () => spy.received.filter((request) => request.endsWith(" elicitation/create")).length === 2;
    ui.script(async (dialog) => {
      await until(bothArrived, 15_000, () => spy.received.join(", "));
      return person({ Name: "Ada" })(dialog);
    });
    const both = await Promise.all(["legacy", "modern"].map((server) => h.call(`mcp__${server}__ask_person`, {}, { interactive: true })));
    expect(both.map((outcome) => json(outcome).action)).toEqual(["accept", "accept"]);
    const starts = ui.dialogs.flatMap((dialog, index) => (dialog.title.endsWith("asks for information") ? [index] : []));
    expect(starts).toEqual([0, 5]);
  });
});

describe("elicitation with server-everything", () => {
  it("answers trigger-elicitation-request (multi-select, titled and legacy enums)", async () => {
    const ui = fakeUi((dialog) => {
      if (dialog.method === "confirm") return true;
      if (dialog.title.includes("Untitled Multiple Select Enum") && !dialog.options!.some((option) => option === "[x] Piano"))
        return "[ ] Piano";
      if (dialog.method === "select") return dialog.options![0];
      return dialog.title.includes("legal name") ? "Grace Hopper" : "";
    });
    const h = await startHost({ everything: everythingStdio() }, { services: { ui } });
    await h.waitForTools(2, { server: "everything" });
    const text = textOf(await h.call("mcp__everything__trigger-elicitation-request", {}, { interactive: true }));
    const raw = JSON.parse(text.slice(text.indexOf("{")));
    expect(raw.content).toMatchObject({
      name: "Grace Hopper",
      untitledMultipleSelectEnum: ["Guitar", "Piano"],
      titledMultipleSelectEnum: ["fish-1"],
      legacyTitledEnum: "pet-1",
    });
    const multi = ui.dialogs.filter((dialog) => dialog.title.includes("Untitled Multiple Select Enum"));
    expect(multi[0]!.options).toEqual(["Done (Guitar)", "[x] Guitar", "[ ] Piano", "[ ] Violin", "[ ] Drums", "[ ] Bass"]);
    expect(multi[1]!.options![0]).toBe("Done (Guitar, Piano)");
  });

  it("a kernel without the elicitation plugin declares no capability and registers no handler", async () => {
    const spy = handlerSpy();
    const kernel = createKernel({ disable: ["elicitation"], plugins: [spy.plugin] });
    const h = await startHost(
      { everything: everythingStdio(), interactive: fixtureServer("interactive") },
      { kernel, services: { ui: fakeUi(person()) } },
    );
    const tools = await h.waitForTools(2, { server: "everything" });
    await h.waitForTools(1, { server: "interactive" });
    expect(tools).not.toContain("mcp__everything__trigger-elicitation-request");
    expect(tools).not.toContain("mcp__everything__trigger-url-elicitation");
    expect(json(await h.call("mcp__interactive__capabilities")).elicitation).toBeUndefined();
    expect(spy.methods).not.toContain("elicitation/create");
  });
});
