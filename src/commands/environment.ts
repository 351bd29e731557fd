import { loadConfig } from "../config/load.ts";
import { agentDir } from "../config/paths.ts";
import { savedProjectTrust } from "../config/trust.ts";
import type { EffectiveConfig } from "../kernel/settings.ts";
import type { Kernel } from "../kernel/kernel.ts";
import type { CommandEnvironment, CredentialQueries } from "../kernel/commands.ts";

export interface CliEnvironmentOptions {
  /** `--approve`/`-a` (true) or `--no-approve`/`-na` (false): the project's trust for this run. */
  readonly trustOverride?: boolean;
  /** Where lines shown before the command finishes go (default: standard output). */
  readonly progress?: (text: string) => void;
  /** The stored credentials of an agent folder (the OAuth plugin's store, which the CLI entry supplies); default: none stored. */
  readonly credentials?: (agentDir: string) => CredentialQueries;
}

/** A surface without a credential store: nothing is stored, nothing to remove. */
const NO_CREDENTIALS: CredentialQueries = { has: async () => false, remove: async () => false };

/**
 * The CLI has no Pi session: it reads Pi's saved trust decision, which
 * `--approve`/`-a` or `--no-approve`/`-na` override for one run.
 */
export function cliCommandEnvironment(
  cwd: string,
  env: NodeJS.ProcessEnv,
  createKernel: (config?: EffectiveConfig) => Promise<Kernel>,
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
    credentials: options.credentials?.(agent) ?? NO_CREDENTIALS,
    progress: options.progress ?? ((text) => void process.stdout.write(`${text}\n`)),
    createKernel,
    withTrust: (trusted) => cliCommandEnvironment(cwd, env, createKernel, { ...options, trustOverride: trusted }),
    loadConfig: () => (config ??= loadConfig({ agentDir: agent, cwd, projectTrusted: savedTrust === true, env })),
  };
}
