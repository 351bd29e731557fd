import type { Kernel, KernelPlugin } from "../../src/kernel/kernel.ts";
import { ConnectionSession } from "./connection-session.ts";
import { usesOAuth } from "../../src/kernel/settings.ts";
import { CredentialStore, definitionBinding } from "./store.ts";
import { authCommand, logoutCommand } from "./commands.ts";
import type { CommandSpec } from "../../src/kernel/commands.ts";

/**
 * OAuth for remote servers whose `auth` is `{type: "oauth"}` or omitted (a
 * server may still ask for authorization: discovery starts at its first 401).
 * `{type: "none"}` disables discovery, and bearer servers belong to
 * auth-bearer. The provider sends stored tokens and refreshes them; it never
 * starts an interactive flow, so a server that needs one goes to `needs_auth`
 * (or `needs_client_registration`) until `auth <server>` is run.
 */
export class OAuthPlugin implements KernelPlugin {
  readonly name = "auth-oauth";
  /** `auth` and `logout`, on both surfaces. */
  readonly commands: readonly CommandSpec[] = [authCommand, logoutCommand];
  apply(kernel: Kernel): void {
    // Stored credentials are part of a connection's identity: after a logout or a new `auth` elsewhere, a retained client is not reused.
    kernel.hooks.authIdentity.tap(this.name, (identity, context) => {
      const definition = context.server.definition;
      if (!usesOAuth(definition)) return identity;
      const stored = new CredentialStore(context.host.agentDir).identitySync(context.server.name, definitionBinding(definition));
      return `${identity}|oauth:${stored}`;
    });
    kernel.hooks.auth.tapPromise(this.name, async (context) => {
      const definition = context.server.definition;
      if (!usesOAuth(definition)) return undefined;
      const store = new CredentialStore(context.host.agentDir);
      const session = new ConnectionSession({
        server: context.server.name,
        definition,
        store,
        log: context.log,
        redact: context.host.redact,
        connectTimeoutMs: definition.connectTimeoutMs ?? context.host.config.connectTimeoutMs,
      });
      return { authProvider: session, secrets: () => session.knownSecrets() };
    });
  }
}
