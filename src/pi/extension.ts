import type { ExtensionAPI, ExtensionCommandContext, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { parseArgsStringToArgv } from "string-argv";
import { commandsFor, helpCommand, runCommandLine } from "../commands/index.ts";
import { NO_CREDENTIALS } from "../commands/environment.ts";
import type { CommandEnvironment, CommandSpec } from "../commands/types.ts";
import { loadConfig } from "../config/load.ts";
import { agentDir } from "../config/paths.ts";
import { savedProjectTrust } from "../config/trust.ts";
import type { EffectiveConfig } from "../config/types.ts";
import { completeArguments } from "./completion.ts";

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
      ctx.ui.notify(result.output, result.exitCode === 0 ? "info" : "error");
    },
  });

  pi.on("session_start", (_event, ctx) => {
    // One event-loop turn later, so Pi's start never waits for MCP work.
    setTimeout(() => void environment(ctx).loadConfig(), 0);
  });
}
