import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { CommandSpec } from "../../src/commands/types.ts";
import { writeAtomically } from "../../src/config/files.ts";
import { PiMcpError } from "../../src/kernel/errors.ts";
import type { Kernel, KernelPlugin } from "../../src/kernel/kernel.ts";
import type { ConnectionContext } from "../../src/kernel/types.ts";
import type { RetainedLog } from "../../src/runtime/retained-log.ts";
import { safeTail, withoutLeadingFragment } from "../../src/safety/text.ts";

/** Log writes are folded for this long, or until this much is waiting. */
const FLUSH_MS = 50;
const FLUSH_BYTES = 64 * 1024;
/** What `/mcp logs` shows at most: Pi's display limit. */
const SHOW_BYTES = 50 * 1024;
const SHOW_LINES = 2_000;

export function retainedLogPath(privateDir: string, server: string): string {
  return join(privateDir, "logs", `${server.replace(/[^A-Za-z0-9._-]/g, "_")}.log`);
}

/**
 * Keeps a private copy of each server's retained log (its newest 256 KiB) on
 * disk, written at most every 50 ms or 64 KiB, so `/mcp logs` can point to it.
 * `finish()` writes what is still waiting and stops: nothing is written after
 * its host shut down.
 */
function persist(log: RetainedLog, path: string): { finish(): Promise<void> } {
  let timer: NodeJS.Timeout | undefined;
  let pending = 0;
  let finished = false;
  // At most one write runs and at most one more waits: each writes the newest text, so a flood
  // costs a bounded number of rewrites, not one per 64 KiB.
  let running: Promise<void> | undefined;
  let again = false;
  const write = async () => {
    do {
      again = false;
      await writeAtomically(path, log.text(), 0o600).catch(() => undefined);
    } while (again);
    running = undefined;
  };
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    pending = 0;
    if (running) again = true;
    else running = write();
  };
  let lastBytes = log.bytes + log.droppedBytes;
  log.onAppend(() => {
    if (finished) return;
    const total = log.bytes + log.droppedBytes;
    pending += total - lastBytes;
    lastBytes = total;
    if (pending >= FLUSH_BYTES) flush();
    else timer ??= setTimeout(flush, FLUSH_MS);
  });
  return {
    async finish() {
      if (finished) return;
      finished = true;
      if (timer !== undefined) flush();
      await running;
    },
  };
}

/**
 * MCP logging: `notifications/message` joins the server's stderr in its
 * retained log. pi-mcp never sends `logging/setLevel` on its own and never
 * writes server logs to Pi's output.
 */
export class LoggingPlugin implements KernelPlugin {
  readonly name = "logging";
  private readonly persisted = new WeakSet<RetainedLog>();
  /** The log files each host writes (by its private folder), finished when it shuts down. */
  private readonly writers = new Map<string, Array<{ finish(): Promise<void> }>>();

  apply(kernel: Kernel): void {
    kernel.hooks.hostShutdown.tapPromise(this.name, async (host) => {
      const writers = this.writers.get(host.privateDir) ?? [];
      this.writers.delete(host.privateDir);
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
    const folder = join(connection.host.privateDir, "logs");
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    const writer = persist(connection.retainedLog, retainedLogPath(connection.host.privateDir, connection.server.name));
    const folderWriters = this.writers.get(connection.host.privateDir) ?? [];
    this.writers.set(connection.host.privateDir, [...folderWriters, writer]);
  }

  readonly commands: readonly CommandSpec[] = [
    {
      name: "logs",
      surfaces: ["pi"],
      summary: "Show retained server logs (stderr and MCP logging); sends nothing to servers",
      usage: "logs [server]",
      positionals: [{ name: "server", description: "Server name" }],
      options: {},
      async run(input, env) {
        if (!env.runtime) throw new PiMcpError("failed", "this command needs a running Pi session");
        const host = await env.runtime.host();
        const wanted = input.positionals[0];
        const names = host.status().map((status) => status.name).filter((name) => wanted === undefined || name === wanted);
        if (wanted !== undefined && names.length === 0) throw new PiMcpError("not_found", `no server "${wanted}" in this session`);
        const redact = host.context.redact;
        // A log that dropped its oldest bytes may start inside a secret: that fragment goes before anything is shown.
        const parts = names.map((name) => {
          const log = host.connection(name)?.log;
          const text = log ? (log.droppedBytes > 0 ? withoutLeadingFragment(log.text(), redact) : log.text()) : "";
          return { name, text, lost: (log?.droppedBytes ?? 0) > 0 };
        });
        const combined = parts.map((part) => `== ${part.name} ==\n${part.text || "(nothing logged)"}`).join("\n");
        // Redacted and stripped whole, then cut: a secret near the cut is never shown in part.
        const shown = safeTail(combined, redact, { maxBytes: SHOW_BYTES, maxLines: SHOW_LINES });
        const output = shown.text;
        if (!shown.cut && !parts.some((part) => part.lost)) return { exitCode: 0, output };
        // A server that logged nothing has no file to point to.
        const files = parts.filter((part) => part.text !== "").map((part) => retainedLogPath(host.context.privateDir, part.name)).join(", ");
        return { exitCode: 0, output: `[older lines not shown; retained logs: ${files}]\n${output}` };
      },
    },
  ];
}
