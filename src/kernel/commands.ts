/*
 * The command contract: what a command (core or plugin) declares and what the
 * surface that runs it (the CLI, `/mcp`) supplies.
 */
import type { PluginKernel } from "./hooks.ts";
import type { PluginHost } from "./host.ts";
import { PiMcpError } from "./errors.ts";
import type { EffectiveConfig, Scope, ServerDefinition } from "./settings.ts";
import type { ConnectionStatus } from "./status.ts";

/** Which surface runs a command: the standalone CLI or `/mcp` inside Pi. */
export type Surface = "cli" | "pi";

export interface OptionSpec {
  readonly type: "string" | "boolean";
  readonly short?: string;
  readonly multiple?: boolean;
  readonly description: string;
  readonly valueHint?: string;
  /** The only values a string option takes: any other is a usage error on both surfaces. */
  readonly choices?: readonly string[];
  /** Only accepted on this surface. */
  readonly only?: Surface;
}

/** One example command line of a command (without the `pi-mcp` or `/mcp` prefix). */
export interface CommandExample {
  readonly line: string;
  readonly description: string;
  /** Shown only on this surface (an example using `--json` is the CLI's). */
  readonly only?: Surface;
}

export interface PositionalSpec {
  readonly name: string;
  readonly description: string;
  readonly required?: boolean;
}

export interface ParsedInput {
  readonly positionals: readonly string[];
  readonly options: Readonly<Record<string, string | boolean | string[] | undefined>>;
  /** Everything after a bare `--` (the local server's command and its arguments). */
  readonly rest: readonly string[] | undefined;
}

/** What a command produced; only the CLI entry turns `exitCode` into a process exit. */
export interface CommandResult {
  readonly exitCode: 0 | 1 | 2;
  readonly output: string;
  /** Printed instead of `output` when the caller asked for JSON. */
  readonly json?: unknown;
  /** The output is the command's report: shown like a success even when `exitCode` is 1 (`test` with a failed server). */
  readonly report?: boolean;
}

/** The running session's host, for `/mcp` commands that act on live connections. */
export interface RuntimeControl {
  /** Called after a mutation persisted: connect or disconnect in the background. */
  settingsChanged(server: string, change: "connect" | "disconnect"): Promise<void>;
  status(): Promise<SessionStatus>;
  reconnect(server: string): Promise<void>;
  /** The session's host, for commands that work with live connections. */
  host(): Promise<PluginHost>;
  /** Resolves once no server is connecting or retrying; false when the time ran out. */
  settled(timeoutMs: number): Promise<boolean>;
}

export interface SessionStatus {
  readonly config: EffectiveConfig;
  readonly servers: readonly ConnectionStatus[];
  /** Lines features add (active subscriptions, ...). */
  readonly extra?: readonly string[];
}

/** Stored-credential queries; the OAuth credential store answers them. */
export interface CredentialQueries {
  /** Whether credentials for `server` bound to `definition` (its current URL and client identity) are stored: what a connection would use. */
  has(server: string, definition: ServerDefinition): Promise<boolean>;
  remove(server: string): Promise<boolean>;
}

/** Everything a command may touch, supplied by the surface that runs it. */
export interface CommandEnvironment {
  readonly surface: Surface;
  readonly agentDir: string;
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  /** May the project's settings be read? */
  readonly projectTrusted: boolean;
  /** Pi's saved trust decision for the project (what `-l` requires). */
  readonly savedTrust: boolean | null;
  readonly credentials: CredentialQueries;
  readonly runtime?: RuntimeControl;
  /** Shows a line at once, before the command finishes (`auth` prints its URL, then waits). */
  readonly progress?: (text: string) => void;
  /** The same environment with the project's trust decided for this run (the CLI's `--approve`/`--no-approve`). */
  withTrust?(trusted: boolean): CommandEnvironment;
  /** A kernel with the surface's plugins and the settings' features (`mcp.features`), for temporary connections (`test`). */
  createKernel(config?: EffectiveConfig): Promise<PluginKernel>;
  /** Load the merged configuration (cached by the surface if it likes). */
  loadConfig(): Promise<EffectiveConfig>;
}

export interface CommandSpec {
  readonly name: string;
  readonly surfaces: readonly Surface[];
  readonly summary: string;
  readonly usage: string;
  readonly positionals: readonly PositionalSpec[];
  readonly options: Readonly<Record<string, OptionSpec>>;
  /** Two or three typical command lines, shown by help. */
  readonly examples?: readonly CommandExample[];
  /** Whether a bare `--` introduces a command line. */
  readonly acceptsRest?: boolean;
  /** Completes this command's arguments from the live session, where naming a server is not enough (Pi only). */
  readonly complete?: (request: LiveCompletionRequest) => Promise<CompletionItem[] | null>;
  run(input: ParsedInput, env: CommandEnvironment): Promise<CommandResult>;
}

/** One suggestion for `/mcp` arguments: Pi replaces the whole argument text with `value`. */
export interface CompletionItem {
  readonly value: string;
  readonly label: string;
  readonly description?: string;
}

export interface LiveCompletionRequest {
  /** The words after the command name; the last one is the word being typed (possibly empty). */
  readonly words: readonly string[];
  /** The argument text before the word being typed (each item's value starts with it). */
  readonly head: string;
  readonly host: PluginHost;
}

export type { Scope };

/** A usage error of `spec` (exit code 2), with its usage line. */
export function usage(spec: CommandSpec, problem: string, surface?: Surface): PiMcpError {
  return new PiMcpError("usage", `${spec.name}: ${problem}\nusage: ${surfaceUsage(spec, surface)}`);
}

/** A command's usage line without the `[--flag]`s another surface owns (`list --json` is standalone-only). */
export function surfaceUsage(spec: CommandSpec, surface: Surface | undefined): string {
  if (surface === undefined) return spec.usage;
  let text = spec.usage;
  for (const [name, option] of Object.entries(spec.options)) {
    if (option.only && option.only !== surface) text = text.replaceAll(` [--${name}]`, "");
  }
  return text;
}
