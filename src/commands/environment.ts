import { loadConfig } from "../config/load.ts";
import { agentDir } from "../config/paths.ts";
import { savedProjectTrust } from "../config/trust.ts";
import type { EffectiveConfig } from "../config/types.ts";
import type { Kernel } from "../kernel/kernel.ts";
import { credentialStore } from "./auth.ts";
import type { CommandEnvironment } from "./types.ts";

/**
 * The CLI has no Pi session: it reads Pi's saved trust decision, which
 * `--approve`/`-a` or `--no-approve`/`-na` override for one run (`trustOverride`).
 */
export function cliCommandEnvironment(
  cwd: string,
  env: NodeJS.ProcessEnv,
  createKernel: () => Promise<Kernel>,
  trustOverride?: boolean,
): CommandEnvironment {
  const agent = agentDir(env);
  const savedTrust = trustOverride ?? savedProjectTrust(agent, cwd);
  let config: Promise<EffectiveConfig> | undefined;
  return {
    surface: "cli",
    agentDir: agent,
    cwd,
    env,
    projectTrusted: savedTrust === true,
    savedTrust,
    credentials: credentialStore(agent),
    progress: (text) => void process.stdout.write(`${text}\n`),
    createKernel,
    withTrust: (trusted) => cliCommandEnvironment(cwd, env, createKernel, trusted),
    loadConfig: () => (config ??= loadConfig({ agentDir: agent, cwd, projectTrusted: savedTrust === true, env })),
  };
}
