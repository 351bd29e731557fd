import type { Kernel, KernelPlugin } from "../../src/kernel/kernel.ts";

/** `auth: { type: "bearer", token }` sends `Authorization: Bearer <token>` on every request. */
export class BearerAuthPlugin implements KernelPlugin {
  readonly name = "auth-bearer";
  apply(kernel: Kernel): void {
    kernel.hooks.auth.tapPromise(this.name, async (context) => {
      const definition = context.server.definition;
      if (definition?.transport === "stdio" || definition?.auth?.type !== "bearer") return undefined;
      return { headers: { Authorization: `Bearer ${definition.auth.token}` } };
    });
  }
}
