/*
 * Elicitation in a real Pi (the scripted faux model, offline): in RPC mode the
 * server's questions arrive as Pi dialogs (`extension_ui_request`), which the
 * test answers as the person; in print mode, with nobody to ask, an
 * elicitation is declined at once.
 */
import { existsSync, readFileSync } from "node:fs";
import { chmod, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { until } from "../helpers/host.ts";
import { usePiHome, NODE, REPO_ROOT, runPi, startPiRpc } from "../e2e/harness/pi.ts";

const EVERYTHING = join(REPO_ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const INTERACTIVE = join(REPO_ROOT, "test/fixtures/servers/interactive.mjs");

const home = usePiHome();

const writeServers = (servers: Record<string, unknown>) => home.writeSettings({ mcp: { servers } });

const everything = () => ({ command: NODE, args: [EVERYTHING, "stdio"] });

describe("elicitation in a real Pi (RPC mode)", () => {
  it("asks server-everything's trigger-elicitation-request through Pi's dialogs and returns the answers", async () => {
    await writeServers({ everything: everything() });
    const dialogs: any[] = [];
    const rpc = await startPiRpc({
      home: home.home,
      cwd: home.cwd,
      extensions: [REPO_ROOT],
      script: [{ toolCall: { name: "mcp__everything__trigger-elicitation-request", arguments: {} } }, { textFromLastToolResult: true }],
      onUiRequest: (request) => {
        dialogs.push(request);
        if (request.method === "confirm") return { confirmed: true };
        if (request.method === "select") return { value: request.options[0] }; // the default (or Done) comes first
        if (request.method === "input" && request.title.includes("Your full, legal name")) return { value: "Ada Lovelace" };
        if (request.method === "input" && request.title.includes("Favorite first line")) return { value: "Call me Ishmael." };
        return { value: "" }; // keep the default, or leave an optional field empty
      },
    });
    try {
      await rpc.prompt("/mcp wait", { timeoutMs: 30_000 });
      await rpc.prompt("please ask me", { timeoutMs: 30_000 });
      const text: string = (await rpc.send({ type: "get_last_assistant_text" })).data.text;
      expect(text).toContain("User provided the requested information!");
      expect(text).toContain("- Name: Ada Lovelace");
      expect(text).toContain("- Agreed to terms: true");
      expect(text).toContain("- Favorite Integer: 42");
      expect(text).toContain("- Favorite Number: 3.14");
      const raw = JSON.parse(text.slice(text.indexOf("{")));
      expect(raw).toMatchObject({
        action: "accept",
        content: {
          name: "Ada Lovelace",
          check: true,
          firstLine: "Call me Ishmael.",
          integer: 42,
          number: 3.14,
          untitledSingleSelectEnum: "Monica",
          untitledMultipleSelectEnum: ["Guitar"],
          titledSingleSelectEnum: "hero-1",
          titledMultipleSelectEnum: ["fish-1"],
          legacyTitledEnum: "pet-1",
        },
      });
      expect(raw.content.email).toBeUndefined();
      // First the request itself (decline possible), then one dialog per field, by type.
      expect(dialogs[0]).toMatchObject({ method: "confirm", title: 'MCP server "everything" asks for information' });
      expect(dialogs[0].message).toContain("Please provide inputs for the following fields:");
      const methods = Object.fromEntries(
        dialogs.slice(1).map((dialog) => [/asks: ([^(—]+)/.exec(dialog.title)?.[1]?.trim(), dialog.method]),
      );
      expect(methods).toMatchObject({
        String: "input",
        Boolean: "confirm",
        Integer: "input",
        "Untitled Single Select Enum": "select",
        "Titled Multiple Select Enum": "select",
      });
      const hero = dialogs.find((dialog) => dialog.title.includes("Titled Single Select Enum"));
      expect(hero.options).toEqual(["Superman (default)", "Green Lantern", "Wonder Woman"]);
      const pets = dialogs.find((dialog) => dialog.title.includes("Legacy Titled"));
      expect(pets.options[0]).toBe("Cats (default)");
    } finally {
      await rpc.close();
    }
  }, 120_000);

  it("shows trigger-url-elicitation's URL and opens it only after the person accepts", async () => {
    await writeServers({ everything: everything() });
    const opened = join(home.home, "opened.txt");
    const browser = join(home.home, "fake-browser.sh");
    await writeFile(browser, `#!/bin/sh\necho "$1" >> "${opened}"\n`);
    await chmod(browser, 0o755);
    const answers = [false, true];
    const confirms: any[] = [];
    const rpc = await startPiRpc({
      home: home.home,
      cwd: home.cwd,
      extensions: [REPO_ROOT],
      env: { BROWSER: browser },
      script: [
        { toolCall: { name: "mcp__everything__trigger-url-elicitation", arguments: { url: "https://example.com/first" } } },
        { textFromLastToolResult: true },
        { toolCall: { name: "mcp__everything__trigger-url-elicitation", arguments: { url: "https://example.com/second?x=1" } } },
        { textFromLastToolResult: true },
      ],
      onUiRequest: (request) => {
        if (request.method !== "confirm") return undefined;
        confirms.push(request);
        return { confirmed: answers.shift() ?? false };
      },
    });
    try {
      await rpc.prompt("/mcp wait", { timeoutMs: 30_000 });
      await rpc.prompt("open the first page", { timeoutMs: 30_000 });
      expect((await rpc.send({ type: "get_last_assistant_text" })).data.text).toContain("User declined to open the URL");
      await rpc.prompt("open the second page", { timeoutMs: 30_000 });
      expect((await rpc.send({ type: "get_last_assistant_text" })).data.text).toContain("User completed the URL elicitation flow.");
      expect(confirms).toHaveLength(2);
      expect(confirms[0].title).toBe('MCP server "everything" asks you to open a web page');
      expect(confirms[0].message).toContain("https://example.com/first");
      expect(confirms[1].message).toContain("https://example.com/second?x=1");
      expect(confirms[1].message).toContain("Site: example.com");
      await until(
        () => readFileOrEmpty(opened).includes("second"),
        30_000,
        () => `opened: ${readFileOrEmpty(opened)}`,
      );
      expect(readFileOrEmpty(opened).trim().split("\n")).toEqual(["https://example.com/second?x=1"]);
    } finally {
      await rpc.close();
    }
  }, 120_000);
});

function readFileOrEmpty(path: string): string {
  return existsSync(path) ? readFileSync(path, "utf8") : "";
}

describe("elicitation in a real Pi (print mode)", () => {
  it("declines at once: no dialog, no hang", async () => {
    await writeServers({ interactive: { command: NODE, args: [INTERACTIVE] }, everything: everything() });
    const run = await runPi({
      home: home.home,
      cwd: home.cwd,
      extensions: [REPO_ROOT],
      args: ["-p", "/mcp wait", "ask the person"],
      script: [
        {
          toolCalls: [
            { name: "mcp__interactive__ask_person", arguments: {} },
            { name: "mcp__everything__trigger-elicitation-request", arguments: {} },
          ],
        },
        { textFromLastToolResult: true, prefix: "last: " },
      ],
      timeoutMs: 60_000,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("User declined to provide the requested information.");
    const results = run.requests[1]!.messages.filter((message: any) => message.role === "toolResult");
    const fixture = results.find((message: any) => message.toolName === "mcp__interactive__ask_person");
    const answer = JSON.parse(fixture.content[0].text);
    expect(answer.action).toBe("decline");
    expect(answer.elapsedMs).toBeLessThan(1_000);
  }, 120_000);
});
