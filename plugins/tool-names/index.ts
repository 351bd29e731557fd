import { STAGE, type Kernel, type KernelPlugin } from "../../src/kernel/kernel.ts";
import { piToolName } from "./names.ts";

/**
 * Names every server tool `mcp__<server>__<tool>`, made safe for model
 * providers and deterministic (see names.ts). Without this plugin the host
 * offers a tool under its raw name, and leaves out one whose raw name
 * providers would reject or that another tool already has.
 */
export class ToolNamesPlugin implements KernelPlugin {
  readonly name = "tool-names";
  apply(kernel: Kernel): void {
    kernel.hooks.toolName.tap({ name: this.name, stage: STAGE.BUILTIN }, (_name, context) => piToolName(context));
  }
}
