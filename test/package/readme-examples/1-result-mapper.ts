import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { registerPlugin, STAGE, type KernelPlugin } from "pi-mcp";

const csvMapper: KernelPlugin = {
  name: "acme-csv",
  apply(kernel) {
    kernel.hooks.mapContent.for("resource").tapPromise({ name: "acme-csv", stage: STAGE.BEFORE_BUILTIN }, async (block, context) => {
      const resource = block.resource as { mimeType?: string; text?: string };
      if (resource.mimeType !== "text/csv") return undefined; // not ours: the built-in mapper takes it
      return [{ type: "text", text: `CSV from ${context.server}:\n${resource.text}` }];
    });
  },
};

export default function (pi: ExtensionAPI) {
  registerPlugin(csvMapper); // applies to every pi-mcp host started after this
}
