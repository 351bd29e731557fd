import type { ExtensionAPI, ExtensionCommandContext, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { writeSync } from "node:fs";
import { parseArgsStringToArgv } from "string-argv";
import { commandsFor, helpCommand, runCommandLine } from "../commands/index.ts";
import { NO_CREDENTIALS } from "../commands/environment.ts";
import type { CommandEnvironment, CommandResult, CommandSpec } from "../commands/types.ts";
import { loadConfig } from "../config/load.ts";
import { agentDir } from "../config/paths.ts";
import { savedProjectTrust } from "../config/trust.ts";
import type { EffectiveConfig } from "../config/types.ts";
import { completeArguments } from "./completion.ts";

/**
 * Print mode has no UI (notify goes nowhere) and Pi moves console output to
 * stderr, so there the result is written straight to the process's own
 * stdout/stderr, and a failure sets the exit code. Elsewhere it is a notice.
 */
function showResult(ctx: ExtensionContext, result: CommandResult): void {
  if (ctx.mode === "print") {
    writeSync(result.exitCode === 0 ? 1 : 2, `${result.output}\n`);
    if (result.exitCode !== 0) process.exitCode = result.exitCode;
    return;
  }
  ctx.ui.notify(result.output, result.exitCode === 0 ? "info" : "error");
}

/**
 * The Pi side of pi-mcp: registers `/mcp` (which makes Pi 0.99.1+ skip its
 * built-in MCP extension) and reads the settings in the background.
 */
export function registerPiMcp(pi: ExtensionAPI): void {
  let config: EffectiveConfig | undefined;
  const commands = (): CommandSpec[] => [...commandsFor("pi"), helpCommand(() => commands())];

  const environment = (ctx: ExtensionContext): CommandEnvironment => {
    const agent = agentDir();
    const projectTrusted = ctx.isProjectTrusted();
    return {
      surface: "pi",
      agentDir: agent,
      cwd: ctx.cwd,
      env: process.env,
      projectTrusted,
      savedTrust: savedProjectTrust(agent, ctx.cwd),
      credentials: NO_CREDENTIALS,
      loadConfig: async () => (config = await loadConfig({ agentDir: agent, cwd: ctx.cwd, projectTrusted, env: process.env })),
    };
  };

  pi.registerCommand("mcp", {
    description: "Manage MCP servers (pi-mcp): /mcp help",
    getArgumentCompletions: (prefix) =>
      completeArguments(prefix, commands(), config?.servers.map((server) => server.name) ?? []),
    handler: async (args: string, ctx: ExtensionCommandContext) => {
      const argv = parseArgsStringToArgv(args);
      const result = await runCommandLine(commands(), argv.length > 0 ? argv : ["help"], environment(ctx));
      showResult(ctx, result);
    },
  });

  pi.on("session_start", (_event, ctx) => {
    // One event-loop turn later, so Pi's start never waits for MCP work.
    setTimeout(() => void environment(ctx).loadConfig(), 0);
  });
}
