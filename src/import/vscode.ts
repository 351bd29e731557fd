import {
  type DefinitionBuilder,
  ENV_FILE_REFUSAL,
  REDIRECT_NOTE,
  keepOAuth,
  mapCommon,
  mapOAuthObject,
  oauthString,
  oauthUnsupported,
  type HostProfile,
  type OAuthField,
} from "./mapping.ts";
import type { Mapped } from "./types.ts";
import { convertTemplate, type VariableDialect } from "./values.ts";

/*
 * VS Code's `mcp.json` (a workspace's `.vscode/mcp.json` or the user
 * profile's; older user settings keep the same shape under `mcp`). Servers
 * are under `servers`, prompts for secrets under `inputs`. VS Code fills in
 * `${env:NAME}` from the environment, asks for `${input:ID}`, and fills in its
 * predefined variables (`${workspaceFolder}`, `${userHome}`, …) itself.
 */

const VARIABLES: VariableDialect = {
  host: "VS Code",
  envPrefix: true,
  hostVariables: new Set([
    "userHome",
    "workspaceFolder",
    "workspaceFolderBasename",
    "workspaceRoot",
    "cwd",
    "pathSeparator",
    "execPath",
    "file",
    "fileBasename",
    "fileBasenameNoExtension",
    "fileDirname",
    "fileDirnameBasename",
    "fileExtname",
    "fileWorkspaceFolder",
    "relativeFile",
    "relativeFileDirname",
    "lineNumber",
    "columnNumber",
    "selectedText",
    "defaultBuildTask",
  ]),
  defaults: false,
};

const GALLERY_NOTE = "not imported: gallery metadata";

export const VSCODE: HostProfile = {
  host: "VS Code",
  variables: VARIABLES,
  types: { stdio: "stdio", http: "http", sse: "sse" },
  noted: {
    dev: "not imported: VS Code's development mode (watch and debug)",
    gallery: GALLERY_NOTE,
    version: GALLERY_NOTE,
  },
  refused: { envFile: ENV_FILE_REFUSAL },
  remote: { oauth: (value, builder) => mapOAuth(value, builder) },
  field(key, value, builder, { raw }) {
    switch (key) {
      case "sandboxEnabled":
        if (value === true)
          builder.fail(
            "sandboxEnabled",
            "VS Code runs this server in a sandbox that limits its files and network; pi-mcp cannot sandbox a server",
          );
        else if (value !== false) builder.fail("sandboxEnabled", "must be true or false");
        return true;
      case "sandbox":
        if (raw.sandboxEnabled !== true) builder.note("sandbox", "not imported: it applies only with sandboxEnabled");
        return true;
      default:
        return false;
    }
  },
};

export function mapVscode(name: string, raw: unknown): Mapped {
  return mapCommon(name, raw, VSCODE);
}

const VSCODE_OAUTH: Readonly<Record<string, OAuthField>> = {
  clientId: oauthString("clientId", (text) => convertTemplate(text, VARIABLES)),
};

function mapOAuth(value: unknown, builder: DefinitionBuilder): void {
  const auth = mapOAuthObject(
    "oauth",
    value,
    builder,
    VSCODE_OAUTH,
    oauthUnsupported("a field pi-mcp does not know from VS Code; it cannot tell what it changes"),
  );
  if (!auth) return;
  if (auth.clientId !== undefined) builder.note("oauth", `the registered client must accept ${REDIRECT_NOTE}`);
  keepOAuth(auth, builder);
}
