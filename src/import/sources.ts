import { homedir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import type { SourceFile, SourceFormat } from "./types.ts";

export const HOSTS = ["pi", "claude", "cursor", "vscode"] as const;

export const HOST_NAMES: Readonly<Record<SourceFormat, string>> = {
  pi: "Pi's built-in MCP",
  claude: "Claude Code",
  cursor: "Cursor",
  vscode: "VS Code",
  generic: "an mcpServers file",
};

export interface SourceSpec {
  /** What the user named: a host, or the file. */
  readonly label: string;
  readonly files: readonly SourceFile[];
  /** A file named on the command line must exist. */
  readonly explicit: boolean;
}

export interface Places {
  readonly agentDir: string;
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
}

/** Pi's built-in MCP configuration files, global first (a project entry replaces a global one). */
export function piFiles(places: Pick<Places, "agentDir" | "cwd">): SourceFile[] {
  return [
    { file: join(places.agentDir, "mcp.json"), scope: "global", format: "pi", key: "mcpServers", projectLevel: false },
    { file: join(places.cwd, ".pi", "mcp.json"), scope: "project", format: "pi", key: "mcpServers", projectLevel: true },
  ];
}

/**
 * The files a `--from` value reads, in precedence order (later files win for
 * the same name and scope, as in their host): user-level files before
 * project-level ones.
 */
export function sourcesFor(from: string, places: Places): SourceSpec {
  const home = places.env.HOME || homedir();
  const project = (file: string, format: SourceFormat, key: SourceFile["key"]): SourceFile => ({
    file: join(places.cwd, file),
    scope: "project",
    format,
    key,
    projectLevel: true,
  });
  switch (from) {
    case "pi":
      return { label: "pi", files: piFiles(places), explicit: false };
    case "claude":
      return { label: "claude", files: [project(".mcp.json", "claude", "mcpServers")], explicit: false };
    case "cursor":
      return {
        label: "cursor",
        files: [
          { file: join(home, ".cursor", "mcp.json"), scope: "global", format: "cursor", key: "mcpServers", projectLevel: false },
          project(join(".cursor", "mcp.json"), "cursor", "mcpServers"),
        ],
        explicit: false,
      };
    case "vscode": {
      const user = vscodeUserFolder(home, places.env);
      return {
        label: "vscode",
        files: [
          { file: join(user, "settings.json"), scope: "global", format: "vscode", key: "mcp.servers", projectLevel: false },
          { file: join(user, "mcp.json"), scope: "global", format: "vscode", key: "servers", projectLevel: false },
          project(join(".vscode", "mcp.json"), "vscode", "servers"),
        ],
        explicit: false,
      };
    }
    default: {
      const file = resolve(places.cwd, from);
      return {
        label: file,
        files: [{ file, scope: "global", format: formatOfPath(file, places.agentDir), projectLevel: false }],
        explicit: true,
      };
    }
  }
}

/** VS Code's user folder (stable edition) on this platform. */
function vscodeUserFolder(home: string, env: NodeJS.ProcessEnv): string {
  if (process.platform === "darwin") return join(home, "Library", "Application Support", "Code", "User");
  if (process.platform === "win32") return join(env.APPDATA || join(home, "AppData", "Roaming"), "Code", "User");
  return join(env.XDG_CONFIG_HOME || join(home, ".config"), "Code", "User");
}

/** A named file is read in its host's dialect when its place says which host it belongs to. */
function formatOfPath(file: string, agentDir: string): SourceFormat {
  const name = basename(file);
  const folder = basename(dirname(file));
  if (file === join(agentDir, "mcp.json") || (name === "mcp.json" && folder === ".pi")) return "pi";
  if (name === ".mcp.json") return "claude";
  if (name === "mcp.json" && folder === ".cursor") return "cursor";
  if (name === "mcp.json" && folder === ".vscode") return "vscode";
  return "generic";
}
