import { realpathSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";

/** Pi's agent folder: `PI_CODING_AGENT_DIR` (with `~` expanded) or `~/.pi/agent`, as Pi computes it. */
export function agentDir(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env.PI_CODING_AGENT_DIR;
  if (configured) {
    if (configured === "~") return homedir();
    if (configured.startsWith("~/")) return join(homedir(), configured.slice(2));
    return resolve(configured);
  }
  return join(homedir(), ".pi", "agent");
}

export function globalSettingsPath(agent: string): string {
  return join(agent, "settings.json");
}

export function projectSettingsPath(cwd: string): string {
  return join(cwd, ".pi", "settings.json");
}

/** The real path of a folder (so symlinked checkouts share trust), or its resolved path if it is gone. */
export function canonicalPath(path: string): string {
  try {
    return realpathSync(resolve(path));
  } catch {
    return resolve(path);
  }
}

/** The folders from `path` up to the root, nearest first. */
export function ancestors(path: string): string[] {
  const folders: string[] = [];
  for (let current = path; ; current = dirname(current)) {
    folders.push(current);
    if (dirname(current) === current) return folders;
  }
}
