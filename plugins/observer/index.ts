/*
 * The MCP Observer UI, kernel side: builds every tool row (server tools and
 * the fixed resource tools) on the `render` hook, so third parties can refine
 * rows after it. The Pi side (pi.ts, this plugin's `piPart`) draws rows with
 * pi-tui and keeps the footer and Attention Notices; it is loaded only inside
 * Pi, so the CLI can load the composition without Pi.
 */
import { STAGE, type Kernel, type KernelPlugin } from "../../src/kernel/kernel.ts";
import { buildRow } from "./model.ts";

export class ObserverPlugin implements KernelPlugin {
  readonly name = "observer";
  readonly piPart = () => import("./pi.ts").then((module) => module.observerPiPart);

  apply(kernel: Kernel): void {
    kernel.hooks.render.tap({ name: this.name, stage: STAGE.BUILTIN }, (model, context) => buildRow(model, context));
  }
}
