import type { PluginKernel } from "../kernel/hooks.ts";
import type { AuthHandle, ConnectionContext, Redactor } from "../kernel/types.ts";
import type { SdkOutputSink } from "../safety/sdk-output.ts";
import { createRedactor } from "../safety/text.ts";
import type { RetainedLog } from "./retained-log.ts";

/**
 * The authentication a connection of `context` would use: its auth settings,
 * refined by the auth plugins (the stored OAuth credentials, read now). It
 * holds the settings' resolved values: keep it in memory, hash it for keys.
 */
export function authIdentityOf(kernel: PluginKernel, context: ConnectionContext): string {
  const definition = context.server.definition;
  const settings = definition === undefined || definition.transport === "stdio" ? null : (definition.auth ?? null);
  return kernel.hooks.authIdentity.call(JSON.stringify(settings), context);
}

/**
 * What a connection's newest client was authenticated with. It outlives
 * the attempt that asked for it: a handoff checks it, and the SDK's output
 * of any attempt is redacted with the credentials it holds.
 */
export class ConnectionCredentials {
  /** The authentication identity (settings and stored credentials) the newest client was built with. */
  private builtWith: string | undefined;
  /** The credential values the newest client's authentication holds. */
  private secrets: () => readonly string[] = () => [];
  /**
   * Where the SDK's own console output about this server goes: its retained
   * log, redacted at once with the settings' secrets and the credentials the
   * authentication holds (a token endpoint's error may quote them).
   */
  readonly sdkSink: SdkOutputSink;

  constructor(log: () => RetainedLog, redact: () => Redactor) {
    this.sdkSink = (line) => log().append(`${createRedactor(this.secrets(), redact())(line)}\n`);
  }

  /** The authentication for a new client, from the auth plugins. */
  async authenticate(kernel: PluginKernel, context: ConnectionContext): Promise<AuthHandle | undefined> {
    // What the credentials are when this client gets them: a handoff checks they still are (see stillAsBuilt).
    this.builtWith = authIdentityOf(kernel, context);
    const auth = await kernel.hooks.auth.promise(context);
    this.secrets = auth?.secrets ?? (() => []);
    return auth;
  }

  /**
   * Whether the stored credentials are still the ones the client was built
   * with (re-read now): after a logout or a new `auth`, even in another
   * terminal, a retained client must not carry the old ones to a new session.
   */
  stillAsBuilt(kernel: PluginKernel, context: ConnectionContext): boolean {
    return this.builtWith === authIdentityOf(kernel, context);
  }
}
