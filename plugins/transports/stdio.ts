import { isAbsolute, resolve } from "node:path";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { transportPlugin } from "./plugin.ts";

/**
 * The SDK probes protocol eras for its own stdio class on a short-lived
 * sibling process (a second spawn per connect); a subclass is probed in
 * place, on the one real process.
 */
class InPlaceStdioTransport extends StdioClientTransport {}

/**
 * Local servers: the SDK's stdio transport. The child gets the SDK's minimal
 * environment plus the configured one (never Pi's whole environment), and its
 * stderr always drains into the server's retained log, never the terminal.
 */
export const stdioTransportPlugin = () =>
  transportPlugin("transport-stdio", "stdio", (definition, context) => {
    const cwd = definition.cwd === undefined ? context.host.cwd : isAbsolute(definition.cwd) ? definition.cwd : resolve(context.host.cwd, definition.cwd);
    const transport = new InPlaceStdioTransport({ command: definition.command, args: [...definition.args], env: { ...definition.environment }, cwd, stderr: "pipe" });
    transport.stderr?.on("data", (chunk: Buffer) => context.log(chunk.toString("utf8")));
    return transport;
  });
