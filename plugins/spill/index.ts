import type { Kernel, KernelPlugin } from "../../src/kernel/kernel.ts";
import { writePrivateFile } from "../../src/config/private-files.ts";

/** Keeps complete oversized output in a private Result Spill file under the host's folder. */
export class SpillPlugin implements KernelPlugin {
  readonly name = "spill";
  apply(kernel: Kernel): void {
    kernel.hooks.spill.tapPromise(this.name, async (request) => {
      const path = await writePrivateFile(
        request.host.privateDir,
        "spill",
        `${request.server}-${request.operation}.txt`,
        Buffer.from(request.text, "utf8"),
      );
      return { path };
    });
  }
}
