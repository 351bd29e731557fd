import { basename } from "node:path";
import { pathToFileURL } from "node:url";
import type { Kernel, KernelPlugin } from "../../src/kernel/kernel.ts";

/** Roots: Pi's working directory, as one `file://` root. */
export class RootsPlugin implements KernelPlugin {
  readonly name = "roots";
  apply(kernel: Kernel): void {
    kernel.hooks.clientCapabilities.tap(this.name, (capabilities) => ({ ...capabilities, roots: { listChanged: true } }));
    kernel.hooks.clientCreated.tap(this.name, (connection) => {
      const cwd = connection.host.cwd;
      connection.client.setRequestHandler("roots/list", async () => ({ roots: [{ uri: pathToFileURL(cwd).href, name: basename(cwd) || cwd }] }));
    });
  }
}
