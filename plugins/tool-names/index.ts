import { STAGE, type Kernel, type KernelPlugin } from "../../src/kernel/kernel.ts";
import { MAX_TOOL_NAME, toolNameCandidate } from "../../src/runtime/tool-names.ts";

/** Names every server tool `mcp__<server>__<tool>`, made safe for model providers. */
export class ToolNamesPlugin implements KernelPlugin {
  readonly name = "tool-names";
  apply(kernel: Kernel): void {
    kernel.hooks.toolName.tap({ name: this.name, stage: STAGE.BUILTIN }, (_name, context) =>
      toolNameCandidate(`mcp__${context.server}__${context.tool}`),
    );
  }
}

export { MAX_TOOL_NAME };
