import type { Kernel, KernelPlugin } from "../../src/kernel/kernel.ts";

/**
 * Server Instructions become one attributed section per server with
 * non-empty instructions, in name order, appended to the system prompt. No
 * tool rosters: a change of tools alone leaves the system prompt as it was.
 */
export class InstructionsPlugin implements KernelPlugin {
  readonly name = "instructions";
  apply(kernel: Kernel): void {
    kernel.hooks.systemPrompt.tap(this.name, (prompt, { servers }) => {
      const sections = servers
        .filter((server) => server.instructions !== undefined && server.instructions.trim() !== "")
        .map((server) => `## MCP server "${server.name}"\n\n${server.instructions!.trim()}`);
      if (sections.length === 0) return prompt;
      const header = "# Instructions from MCP servers\n\nThese come from the MCP servers named below; they describe their tools (mcp__<server>__<tool>).";
      return `${prompt}\n\n${header}\n\n${sections.join("\n\n")}`;
    });
  }
}
