/**
 * The logging plugin in-process (a kernel with it alone, fixture servers over
 * the SDK's in-memory transport pair): MCP log messages (`notifications/message`)
 * join the server's retained log and go nowhere else: never a session entry or
 * a message, never Pi's output. pi-mcp never sends `logging/setLevel` on its
 * own. `/mcp logs` shows the retained logs redacted and free of terminal
 * controls, and a private copy is kept on disk, made safe the same way.
 */
import { afterEach, describe, expect, it } from "vitest";
import { LoggingPlugin } from "../../plugins/logging/index.ts";
import type { SessionMessage } from "../../src/kernel/services.ts";
import { retainedLogPath } from "../../plugins/logging/index.ts";
import { fakeServices } from "../helpers/services.ts";
import { fileWhere } from "../helpers/wait.ts";
import { pluginHost, type PluginTestHost, stopAllHosts } from "./harness.ts";

afterEach(stopAllHosts);

/** Resolves once the server's retained log holds `text` (each append is an event); rejects with the log after `timeoutMs`. */
function logged(h: PluginTestHost, server: string, text: string, timeoutMs = 10_000): Promise<string> {
  const log = h.host.server(server)!.log;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`"${text}" not logged in ${timeoutMs} ms; the log: ${log.text()}`));
    }, timeoutMs);
    const check = () => {
      if (!log.text().includes(text)) return;
      clearTimeout(timer);
      stop();
      resolve(log.text());
    };
    const stop = log.onAppend(check);
    check();
  });
}

// 2025-era servers log with `notifications/message` (2026-07-28 deprecates MCP logging: such a server logs to stderr).
describe("a 2025-era server", () => {
  it("logs into the retained log only: never a session entry, a queued message or a conversation message", async () => {
    const services = fakeServices();
    const added: SessionMessage[] = [];
    const session = { ...services.session, addMessage: (message: SessionMessage) => void added.push(message) };
    const h = await pluginHost(
      [new LoggingPlugin()],
      {
        docs: {
          era: "legacy",
          options: { capabilities: { tools: {}, logging: {} } },
          build(server) {
            server.registerTool("work", { description: "Logs while it works." }, async (ctx) => {
              await ctx.mcpReq.log("info", "working on it", "worker");
              await ctx.mcpReq.log("warning", { step: 2, note: "half way" });
              return { content: [{ type: "text", text: "done" }] };
            });
          },
        },
      },
      { services: { ...services, session } },
    );
    await h.waitForTools(1, { server: "docs" });
    await h.call("mcp__docs__work");
    await h.server("docs").instance().server.sendLoggingMessage({ level: "error", data: "unasked", logger: "idle" });
    const text = await logged(h, "docs", "unasked");
    expect(text).toContain("[info] worker: working on it\n");
    expect(text).toContain('[warning] {"step":2,"note":"half way"}\n');
    expect(text).toContain("[error] idle: unasked\n");
    expect(services.session.log).toEqual([]);
    expect(services.session.messages).toEqual([]);
    expect(added).toEqual([]);
  });
});

describe("the retained log", () => {
  const SECRET = "log-secret-2718";

  async function loggingHost() {
    const h = await pluginHost(
      [new LoggingPlugin()],
      {
        docs: {
          era: "legacy",
          options: { capabilities: { logging: {} } },
          settings: { environment: { TOKEN: "${LOG_SECRET}" } },
          build() {},
        },
      },
      { services: fakeServices(), env: { ...process.env, LOG_SECRET: SECRET } },
    );
    await h.waitForState("docs", "connected");
    await h
      .server("docs")
      .instance()
      .server.sendLoggingMessage({ level: "info", data: `token ${SECRET} \u001b[31mred\u001b[0m` });
    await logged(h, "docs", "token");
    return h;
  }

  it("is shown by /mcp logs redacted and stripped, and nothing was asked of the server for it", async () => {
    const h = await loggingHost();
    const shown = (await h.command("logs docs")).output;
    expect(shown).toMatch(/^== docs ==\n\[pi-mcp\] ── connection attempt 1 at \S+ ──\n\[info\] token ‹redacted› red\n$/);
    expect(h.server("docs").methods()).not.toContain("logging/setLevel");
    expect(h.server("docs").methods()).toEqual(["server/discover", "initialize", "notifications/initialized"]);
  });

  it("is kept in a private file, made safe the same way", async () => {
    const h = await loggingHost();
    const file = retainedLogPath(h.privateDir, "docs");
    const text = await fileWhere(file, (content) => content.includes("token"));
    expect(text).toMatch(/^\[pi-mcp\] ── connection attempt 1 at \S+ ──\n\[info\] token ‹redacted› red\n$/);
  });
});
