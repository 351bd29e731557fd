import { updateMcpSettings, wrongShape } from "./files.ts";
import { globalSettingsPath, projectSettingsPath } from "./paths.ts";
import { checkRules, isMask } from "./resolve.ts";
import { readScope } from "./load.ts";
import type { Scope } from "../kernel/settings.ts";
import { PiMcpError } from "../kernel/errors.ts";
import type { CommandEnvironment, ParsedInput } from "../kernel/commands.ts";
import { keyedCopy, isRecord } from "../safety/keys.ts";

export interface Target {
  readonly scope: Scope;
  readonly file: string;
  /** Pi's agent folder: where the shape check remembers the settings texts that passed it. */
  readonly agentDir: string;
}

/**
 * Picks the file a mutation writes: global by default; the project's with
 * `-l/--local`, only when Pi saved trust for the project (the CLI's
 * `--approve`/`--no-approve` override that decision before it gets here).
 */
export function mutationTarget(input: ParsedInput, env: CommandEnvironment): Target {
  if (!input.options.local) return { scope: "global", file: globalSettingsPath(env.agentDir), agentDir: env.agentDir };
  if (env.savedTrust !== true) {
    throw new PiMcpError(
      "not_trusted",
      `project scope needs saved trust for ${env.cwd}: trust the project in Pi first${env.surface === "cli" ? " (or pass --approve)" : ""}`,
    );
  }
  return { scope: "project", file: projectSettingsPath(env.cwd), agentDir: env.agentDir };
}

type Servers = Record<string, unknown>;

/**
 * Applies `change` to the `servers` object of the target file's `mcp` value,
 * under the file lock. The text written is then read back and shape-checked
 * as a session start reads it, so that a pass is remembered (see
 * shape-stamp.ts): Pi's next start after `pi-mcp add` need not load arktype.
 */
export async function changeServers(target: Target, change: (servers: Servers) => void): Promise<void> {
  await updateMcpSettings(target.file, (mcp) => {
    const next = { ...(mcp ?? {}) };
    if (next.servers !== undefined && !isRecord(next.servers)) throw wrongShape(target.file, "mcp.servers", next.servers);
    const servers: Servers = keyedCopy(isRecord(next.servers) ? next.servers : {});
    change(servers);
    next.servers = servers;
    return next;
  });
  await readScope(target.scope, target.file, target.agentDir).catch(() => undefined); // best effort: the next start checks again
}

/** Validates a definition about to be written, exactly as it would be read back (unexpanded). The shape check (arktype) is loaded for it. */
export async function assertWritable(name: string, definition: Record<string, unknown>, target: Target): Promise<void> {
  const { checkShape } = await import("./schema.ts");
  const shape = checkShape({ servers: { [name]: definition } }, target.file);
  const problems = shape.length > 0 ? shape : checkRules(definition, `mcp.servers.${name}`, false);
  if (problems.length > 0) {
    throw new PiMcpError("invalid_settings", problems.map((problem) => `${problem.path}: ${problem.message}`).join("\n"));
  }
}

export function notDefined(name: string, target: Target): PiMcpError {
  return new PiMcpError("not_found", `server "${name}" is not defined in ${target.scope} settings (${target.file})`);
}

export { isMask };
