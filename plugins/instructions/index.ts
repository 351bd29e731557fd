import type { Kernel, KernelPlugin } from "../../src/kernel/kernel.ts";

/** A server whose tools are not declared to the model gets one line saying how to reach them. */
function reachLines(server: string, exposures: readonly string[]): string[] {
  const lines: string[] = [];
  if (exposures.includes("deferred"))
    lines.push(`Some tools of this server (mcp__${server}__*) are not declared to you: find and load them with tool_search.`);
  if (exposures.includes("codemode")) lines.push(`Some tools of this server (mcp__${server}__*) are reachable only from codemode scripts.`);
  return lines;
}

/**
 * Server Instructions become one attributed section per server with
 * non-empty instructions, in name order, appended to the system prompt. No
 * tool rosters: a change of tools alone leaves the system prompt as it was
 * (a server with deferred or codemode tools adds one line on how to reach
 * them, which follows its exposure, not its tool list).
 */
export class InstructionsPlugin implements KernelPlugin {
  readonly name = "instructions";
  apply(kernel: Kernel): void {
    kernel.hooks.systemPrompt.tap(this.name, (prompt, { servers }) => {
      const sections = servers
        .map((server) => ({
          server,
          lines: [...reachLines(server.name, server.exposures), ...(server.instructions?.trim() ? [server.instructions.trim()] : [])],
        }))
        .filter(({ lines }) => lines.length > 0)
        .map(({ server, lines }) => `## MCP server "${server.name}"\n\n${lines.join("\n\n")}`);
      if (sections.length === 0) return prompt;
      const header =
        "# Instructions from MCP servers\n\nThese come from the MCP servers named below; they describe their tools (mcp__<server>__<tool>).";
      return `${prompt}\n\n${header}\n\n${sections.join("\n\n")}`;
    });
  }
}
