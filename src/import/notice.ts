import { createHash } from "node:crypto";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeAtomically } from "../config/atomic-file.ts";
import type { EffectiveConfig } from "../kernel/settings.ts";
import { stripTerminalControls } from "../safety/text.ts";
import { piFiles } from "./sources.ts";
import { parseJson, isRecord } from "../safety/keys.ts";

/** The part of Pi's extension context the notice uses. */
export interface NoticeContext {
  readonly hasUI: boolean;
  readonly cwd: string;
  isProjectTrusted(): boolean;
  readonly ui: { notify(message: string, type?: "info" | "warning" | "error"): void };
}

/** Where the notice remembers which content of each mcp.json it already named. */
export function noticeStatePath(agentDir: string): string {
  return join(agentDir, "pi-mcp", "import-notice.json");
}

/**
 * At session start: when Pi's built-in MCP configuration (`<agentDir>/mcp.json`
 * and, in a trusted project, `.pi/mcp.json`) names servers pi-mcp does not
 * know, show one Attention Notice naming them, `pi-mcp setup` and `pi-mcp import --from pi`.
 * Nothing is connected. A file's content is named once: the notice comes back
 * only after that file changes. Never throws; returns whether it notified.
 */
export async function importNotice(ctx: NoticeContext, agentDir: string, config: EffectiveConfig): Promise<boolean> {
  try {
    if (!ctx.hasUI) return false;
    const known = new Set(config.servers.map((server) => server.name));
    const files = piFiles({ agentDir, cwd: ctx.cwd }).filter((file) => !file.projectLevel || ctx.isProjectTrusted());
    const unknown = new Set<string>();
    const contributing: { file: string; hash: string }[] = [];
    for (const { file } of files) {
      const text = await readFile(file).catch(() => undefined);
      if (text === undefined) continue;
      const names = serverNames(text);
      const missing = names.filter((name) => !known.has(name));
      if (missing.length === 0) continue;
      for (const name of missing) unknown.add(name);
      contributing.push({ file, hash: createHash("sha256").update(text).digest("hex") });
    }
    if (contributing.length === 0) return false;
    const statePath = noticeStatePath(agentDir);
    const state = await readState(statePath);
    if (contributing.every(({ file, hash }) => state[file] === hash)) return false;
    const names = [...unknown].sort().map((name) => stripTerminalControls(name));
    const where = contributing.map(({ file }) => file).join(" and ");
    ctx.ui.notify(
      `Pi's built-in MCP configuration (${where}) names ${names.length === 1 ? "a server" : `${names.length} servers`} pi-mcp does not know: ${names.join(", ")}. ` +
        "pi-mcp does not read mcp.json and has not connected them. Run pi-mcp setup (or /mcp setup; add --dry-run to preview) to move them into pi-mcp's settings, turn Pi's built-in MCP extension off and test them; pi-mcp import --from pi moves them only.",
      "warning",
    );
    for (const { file, hash } of contributing) state[file] = hash;
    await mkdir(join(agentDir, "pi-mcp"), { recursive: true, mode: 0o700 });
    await writeAtomically(statePath, `${JSON.stringify({ version: 1, files: state }, null, 2)}\n`, 0o600);
    return true;
  } catch {
    return false; // the notice is a courtesy: it never disturbs the session
  }
}

/** The server names of an `mcpServers` object, as Pi parses the file (plain JSON); none when Pi could not read it either. */
function serverNames(text: Buffer): string[] {
  try {
    const data: unknown = parseJson(text.toString("utf8").replace(/^\uFEFF/, ""));
    return isRecord(data) && isRecord(data.mcpServers) ? Object.keys(data.mcpServers) : [];
  } catch {
    return [];
  }
}

async function readState(path: string): Promise<Record<string, string>> {
  try {
    const data: unknown = parseJson(await readFile(path, "utf8"));
    if (!isRecord(data) || !isRecord(data.files)) return {};
    return Object.fromEntries(Object.entries(data.files).filter((entry): entry is [string, string] => typeof entry[1] === "string"));
  } catch {
    return {};
  }
}
