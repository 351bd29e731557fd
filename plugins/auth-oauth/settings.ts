import type { RemoteDefinition } from "../../src/kernel/settings.ts";
import { DEFAULTS } from "../../src/kernel/settings.ts";

/** The OAuth-relevant settings of a remote definition (any auth other than oauth counts as none). */
export interface OAuthSettings {
  readonly clientId?: string;
  readonly clientSecret?: string;
  readonly redirectUri: string;
  readonly scopes?: readonly string[];
}

export function oauthSettings(definition: RemoteDefinition): OAuthSettings {
  const auth = definition.auth?.type === "oauth" ? definition.auth : undefined;
  return {
    ...(auth?.clientId !== undefined && { clientId: auth.clientId }),
    ...(auth?.clientSecret !== undefined && { clientSecret: auth.clientSecret }),
    redirectUri: auth?.redirectUri ?? DEFAULTS.oauthRedirectUri,
    ...(auth?.scopes !== undefined && auth.scopes.length > 0 && { scopes: auth.scopes }),
  };
}
