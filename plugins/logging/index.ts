import { join } from "node:path";
import type { CommandSpec } from "../../src/kernel/commands.ts";
import { PiMcpError } from "../../src/kernel/errors.ts";
import type { Kernel, KernelPlugin } from "../../src/kernel/kernel.ts";
import type { ConnectionContext, Redactor, ServerLog } from "../../src/kernel/types.ts";
import { safeTail, safeText, withoutLeadingFragment } from "../../src/safety/text.ts";
import { persistLog, type PersistedLog } from "./persist.ts";
import { hostState } from "../../src/kernel/host-state.ts";

/** The log files each host writes, finished when it shuts down. */
const writersOf = hostState((): PersistedLog[] => []);

/** What `/mcp logs` shows at most: Pi's display limit. */
const SHOW_BYTES = 50 * 1024;
const SHOW_LINES = 2_000;

export function retainedLogPath(privateDir: string, server: string): string {
  return join(privateDir, "logs", `${server.replace(/[^A-Za-z0-9._-]/g, "_")}.log`);
}

/**
 * A retained log as a person may see it, on screen (`/mcp logs`) and on disk
 * alike: without the fragment of a secret its dropped oldest bytes may have
 * left at its start, redacted, and free of terminal controls.
 */
function safeLog(log: ServerLog, redact: Redactor): string {
  return safeText(log.droppedBytes > 0 ? withoutLeadingFragment(log.text(), redact) : log.text(), redact);
}

/**
 * MCP logging: `notifications/message` joins the server's stderr in its
 * retained log. pi-mcp never sends `logging/setLevel` on its own and never
 * writes server logs to Pi's output.
 */
export class LoggingPlugin implements KernelPlugin {
  readonly name = "logging";
  /** Logs that already have a file (a log is the session's own: a connection taken over gets a fresh one). */
  private readonly persisted = new WeakSet<ServerLog>();

  apply(kernel: Kernel): void {
    kernel.hooks.hostShutdown.tapPromise(this.name, async ({ context }) => {
      const writers = writersOf(context).splice(0);
      await Promise.all(writers.map((writer) => writer.finish()));
    });
    kernel.hooks.clientCreated.tap(this.name, (connection) => {
      this.persistOnce(connection);
      connection.client.setNotificationHandler("notifications/message", (notification) => {
        if (!connection.isCurrent()) return;
        const { level, logger, data } = notification.params;
        const text = typeof data === "string" ? data : JSON.stringify(data);
        connection.log(`[${level}]${logger ? ` ${logger}:` : ""} ${text}\n`);
      });
    });
  }

  private persistOnce(connection: ConnectionContext): void {
    if (this.persisted.has(connection.retainedLog)) return;
    this.persisted.add(connection.retainedLog);
    const { host, retainedLog } = connection;
    const writer = persistLog(retainedLog, retainedLogPath(host.privateDir, connection.server.name), {
      render: () => safeLog(retainedLog, host.redact), // with the host's current secrets, when it is written
      report: (line) => retainedLog.append(line),
    });
    writersOf(host).push(writer);
  }

  readonly commands: readonly CommandSpec[] = [
    {
      name: "logs",
      surfaces: ["pi"],
      summary: "Show retained server logs (stderr and MCP logging); sends nothing to servers",
      usage: "logs [server]",
      positionals: [{ name: "server", description: "Server name" }],
      options: {},
      examples: [
        { line: "logs", description: "The retained logs of every server of this session" },
        { line: "logs docs", description: "Only docs' log" },
      ],
      async run(input, env) {
        if (!env.runtime) throw new PiMcpError("needs_session", "this command needs a running Pi session");
        const host = await env.runtime.host();
        const wanted = input.positionals[0];
        const names = host
          .status()
          .map((status) => status.name)
          .filter((name) => wanted === undefined || name === wanted);
        if (wanted !== undefined && names.length === 0) throw new PiMcpError("not_found", `no server "${wanted}" in this session`);
        const redact = host.context.redact;
        const parts = names.map((name) => {
          const log = host.server(name)?.log;
          return { name, text: log ? safeLog(log, redact) : "", lost: (log?.droppedBytes ?? 0) > 0 };
        });
        const combined = parts.map((part) => `== ${part.name} ==\n${part.text || "(nothing logged)"}`).join("\n");
        // Redacted and stripped whole, then cut: a secret near the cut is never shown in part.
        const shown = safeTail(combined, redact, { maxBytes: SHOW_BYTES, maxLines: SHOW_LINES });
        const output = shown.text;
        if (!shown.cut && !parts.some((part) => part.lost)) return { exitCode: 0, output };
        // A server that logged nothing has no file to point to.
        const files = parts
          .filter((part) => part.text !== "")
          .map((part) => retainedLogPath(host.context.privateDir, part.name))
          .join(", ");
        return { exitCode: 0, output: `[older lines not shown; retained logs: ${files}]\n${output}` };
      },
    },
  ];
}
