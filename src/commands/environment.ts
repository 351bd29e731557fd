import { loadConfig } from "../config/load.ts";
import { agentDir } from "../config/paths.ts";
import { savedProjectTrust } from "../config/trust.ts";
import type { EffectiveConfig } from "../kernel/settings.ts";
import type { Kernel } from "../kernel/kernel.ts";
import { credentialQueries } from "../auth/store.ts";
import type { CommandEnvironment } from "../kernel/commands.ts";

export interface CliEnvironmentOptions {
  /** `--approve`/`-a` (true) or `--no-approve`/`-na` (false): the project's trust for this run. */
  readonly trustOverride?: boolean;
  /** Where lines shown before the command finishes go (default: standard output). */
  readonly progress?: (text: string) => void;
}

/**
 * The CLI has no Pi session: it reads Pi's saved trust decision, which
 * `--approve`/`-a` or `--no-approve`/`-na` override for one run.
 */
export function cliCommandEnvironment(
  cwd: string,
  env: NodeJS.ProcessEnv,
  createKernel: () => Promise<Kernel>,
  options: CliEnvironmentOptions = {},
): CommandEnvironment {
  const agent = agentDir(env);
  const savedTrust = options.trustOverride ?? savedProjectTrust(agent, cwd);
  let config: Promise<EffectiveConfig> | undefined;
  return {
    surface: "cli",
    agentDir: agent,
    cwd,
    env,
    projectTrusted: savedTrust === true,
    savedTrust,
    credentials: credentialQueries(agent),
    progress: options.progress ?? ((text) => void process.stdout.write(`${text}\n`)),
    createKernel,
    withTrust: (trusted) => cliCommandEnvironment(cwd, env, createKernel, { ...options, trustOverride: trusted }),
    loadConfig: () => (config ??= loadConfig({ agentDir: agent, cwd, projectTrusted: savedTrust === true, env })),
  };
}
