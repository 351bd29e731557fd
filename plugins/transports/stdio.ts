import { isAbsolute, resolve } from "node:path";
import type { ChildProcess } from "node:child_process";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { transportPlugin } from "./plugin.ts";

/**
 * The SDK probes protocol eras for its own stdio class on a short-lived
 * sibling process (a second spawn per connect); a subclass is probed in
 * place, on the one real process.
 */
class InPlaceStdioTransport extends StdioClientTransport {
  /** How the process ended, once it has. */
  exit: string | undefined;

  override async start(): Promise<void> {
    await super.start();
    // The SDK keeps its child private; its exit is what a failure's cause needs.
    const child = (this as unknown as { _process?: ChildProcess })._process;
    child?.once("exit", (code, signal) => {
      this.exit = signal ? `was stopped by signal ${signal}` : `exited with code ${code}`;
    });
  }
}

/** How much of a server's newest stderr is kept for a failure's cause. */
const STDERR_TAIL_BYTES = 4096;

/**
 * Local servers: the SDK's stdio transport. The child gets the SDK's minimal
 * environment plus the configured one (never Pi's whole environment), and its
 * stderr always drains into the server's retained log, never the terminal.
 */
export const stdioTransportPlugin = () =>
  transportPlugin("transport-stdio", "stdio", (definition, context) => {
    const cwd = definition.cwd === undefined ? context.host.cwd : isAbsolute(definition.cwd) ? definition.cwd : resolve(context.host.cwd, definition.cwd);
    const transport = new InPlaceStdioTransport({ command: definition.command, args: [...definition.args], env: { ...definition.environment }, cwd, stderr: "pipe" });
    let stderrTail = "";
    transport.stderr?.on("data", (chunk: Buffer) => {
      const text = chunk.toString("utf8");
      context.log(text);
      stderrTail = (stderrTail + text).slice(-STDERR_TAIL_BYTES);
    });
    return { transport, evidence: () => ({ ...(transport.exit && { exit: transport.exit }), ...(stderrTail && { stderrTail }) }) };
  });
