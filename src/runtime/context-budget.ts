/**
 * The context budget: how much of the model's context the definitions of MCP
 * tools may take before the user's work starts (`mcp.contextBudget`, by
 * default 10% of the active model's context window).
 *
 * The estimate of a definition is one a user can check: the UTF-8 bytes of
 * `{"name":"mcp__<server>__<tool>","description":…,"inputSchema":…}` built
 * from the tool as the server lists it (`tools/list`), divided by 4 and
 * rounded up; a server's is the sum over its tools. `/mcp status`, `list`, `get` and `test` show the same
 * figure.
 *
 * Exposure `auto` (the default of every server and tool that names none):
 * while the tools fit the budget they are `direct`; past it whole servers
 * become `deferred` (found through Pi's `tool_search`), the largest first
 * (ties by name), until the rest fits. Tools whose exposure is set explicitly
 * keep it; the direct ones count against the budget. The decision is a pure
 * function of the offered catalogs, the settings and the model's window, so
 * the same inputs give the same tool definitions in every request and in the
 * next start. While an agent run is under way (from its first model request
 * to its end) the decisions in force are held: a server that appears meanwhile
 * is fitted into what is left, and everything is decided anew once the run
 * ended. A decision that changed since the last request is said in one line
 * when the next run starts.
 */
import type { Tool } from "@modelcontextprotocol/client";
import type { ContextBudgetSetting, EffectiveConfig, Exposure, ExposureSetting, ServerEntry } from "../kernel/settings.ts";
import type { ConnectionStatus, ServerContext } from "../kernel/status.ts";
import { keyed, readCatalog, readIndex } from "./catalog-cache.ts";
import { exposureOf } from "./exposure.ts";

/** The window assumed while the active model's is not known (no model selected, or it names none). */
export const ASSUMED_CONTEXT_WINDOW = 200_000;

type Definition = Pick<Tool, "name" | "description" | "inputSchema">;

/** The UTF-8 bytes of a tool of `server` as the estimate counts them: its Pi name as made by default, description and input schema. */
export function definitionBytes(tool: Definition, server: string): number {
  return Buffer.byteLength(
    JSON.stringify({ name: `mcp__${server}__${tool.name}`, description: tool.description ?? "", inputSchema: tool.inputSchema ?? {} }),
    "utf8",
  );
}

/** Each tool's estimate, kept while its catalog's tool object lives: a re-plan of a big catalog costs lookups, not serialisations. */
const estimates = new WeakMap<Definition, { server: string; tokens: number }>();

/** The estimated tokens of one tool's definition: its bytes / 4, rounded up. */
export function definitionTokens(tool: Definition, server: string): number {
  const known = estimates.get(tool);
  if (known?.server === server) return known.tokens;
  const tokens = Math.ceil(definitionBytes(tool, server) / 4);
  estimates.set(tool, { server, tokens });
  return tokens;
}

/** The estimated tokens of a server's tool definitions (the sum over its tools). */
export function catalogTokens(tools: readonly Definition[], server: string): number {
  let total = 0;
  for (const tool of tools) total += definitionTokens(tool, server);
  return total;
}

/** The budget in tokens: the absolute setting, or its share of `window`. */
export function budgetTokens(setting: ContextBudgetSetting, window: number): number {
  return "tokens" in setting ? setting.tokens : Math.floor((window * setting.percent) / 100);
}

/** `14,200` */
export function formatTokens(tokens: number): string {
  return tokens.toLocaleString("en-US");
}

/** One server as the decision sees it: the tokens of its `auto` tools, and of its tools set to `direct`. */
export interface BudgetServer {
  readonly name: string;
  readonly auto: number;
  readonly direct: number;
}

/**
 * Which servers' `auto` tools are deferred: none while everything fits
 * `budget`; else the largest first (ties by name) until the rest fits.
 * `held`: decisions that stay as they are (an agent run is under way); the
 * other servers are fitted, in name order, into what those leave.
 */
export function deferredServers(servers: readonly BudgetServer[], budget: number, held?: ReadonlyMap<string, AutoDecision>): Set<string> {
  const deferred = new Set<string>();
  let used = 0;
  for (const server of servers) used += server.direct + server.auto;
  if (held) {
    const undecided: BudgetServer[] = [];
    for (const server of servers) {
      const decision = held.get(server.name);
      if (decision === undefined) undecided.push(server);
      else if (decision === "deferred") {
        deferred.add(server.name);
        used -= server.auto;
      }
    }
    // Those not held are the last to be counted: each one that does not fit is deferred.
    used -= undecided.reduce((sum, server) => sum + server.auto, 0);
    for (const server of [...undecided].sort((a, b) => compareNames(a.name, b.name))) {
      if (server.auto === 0) continue;
      if (used + server.auto <= budget) used += server.auto;
      else deferred.add(server.name);
    }
    return deferred;
  }
  const largestFirst = [...servers].filter((server) => server.auto > 0).sort((a, b) => b.auto - a.auto || compareNames(a.name, b.name));
  for (const server of largestFirst) {
    if (used <= budget) break;
    deferred.add(server.name);
    used -= server.auto;
  }
  return deferred;
}

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export type AutoDecision = "direct" | "deferred";

/** A catalog a server offers, as the budget reads it. */
export interface BudgetCatalog {
  readonly entry: ServerEntry;
  readonly catalog: readonly { readonly tool: Tool }[];
}

/** What one plan decided: every offered server's exposures and sizes, and the budget they were decided with. */
export interface BudgetPlan {
  readonly window: number;
  /** Whether `window` is the active model's (else ASSUMED_CONTEXT_WINDOW). */
  readonly windowKnown: boolean;
  readonly budget: number;
  /** Every offered server's place in the budget, by name. */
  readonly servers: ReadonlyMap<string, ServerContext>;
  /** The exposure in force of one tool of an offered server. */
  exposure(entry: ServerEntry, tool: string): Exposure;
  /** The exposures in force of an offered server's tools, sorted (none for a server not offered). */
  exposures(server: string): readonly Exposure[];
}

export interface ContextBudgetOptions {
  /** The active model's context window, when known. */
  readonly window?: number;
  /** Whether Pi has tool exposure (0.84 has none: there `auto` is always direct). */
  readonly exposureSupported?: boolean;
  /** Tells the person one line (a re-decision, or that this Pi cannot defer). */
  readonly notice?: (text: string) => void;
}

/**
 * One session's budget decisions (see the module comment). The host plans at
 * every tool sync; Pi's entry tells it the model's window (`setWindow`) and
 * when a run's first request goes out (`hold`) and when the run ended (`release`).
 */
export class ContextBudget {
  private window: number | undefined;
  private held = false;
  /** The decisions in force, for servers that have `auto` tools. */
  private decisions = new Map<string, AutoDecision>();
  /** The decisions the last model request went out with (what a re-decision is told against): set when a run starts and when it ends. */
  private sent: Map<string, AutoDecision> | undefined;
  private warned = false;
  private last: BudgetPlan | undefined;

  constructor(private readonly options: ContextBudgetOptions = {}) {
    this.window = validWindow(options.window);
  }

  /** The plan of the last sync (undefined before the first). */
  get current(): BudgetPlan | undefined {
    return this.last;
  }

  /** The active model changed: returns whether its window did (the tools are then decided anew at once, unless a run is under way). */
  setWindow(window: number | undefined): boolean {
    const next = validWindow(window);
    if (next === this.window) return false;
    this.window = next;
    return true;
  }

  /**
   * A model request of a run goes out: the decisions in force are held until
   * the run ends, and the first request of a run says, in one line, what was
   * decided anew since the last request.
   */
  hold(): void {
    if (this.held) return;
    this.held = true;
    const before = this.sent;
    this.sent = new Map(this.decisions);
    if (!before || !this.last) return;
    const changed = [...this.decisions].filter(([name, decision]) => before.has(name) && before.get(name) !== decision);
    if (changed.length === 0) return;
    const said = (decision: AutoDecision) =>
      changed
        .filter(([, value]) => value === decision)
        .map(([name]) => name)
        .join(", ");
    const parts = [
      ...(said("deferred") ? [`deferred now: ${said("deferred")}`] : []),
      ...(said("direct") ? [`direct now: ${said("direct")}`] : []),
    ];
    this.options.notice?.(
      `MCP context budget ${formatTokens(this.last.budget)} of ${formatTokens(this.last.window)} tokens, decided anew: ${parts.join("; ")}.`,
    );
  }

  /** Whether a decision changed since the last run's requests went out (it is said when the next run starts). */
  get redecided(): boolean {
    const sent = this.sent;
    return sent !== undefined && [...this.decisions].some(([name, decision]) => sent.has(name) && sent.get(name) !== decision);
  }

  /**
   * The run ended: the next plan decides everything anew. Its last requests
   * went out with the held decisions and those of the servers fitted in
   * meanwhile: a re-decision is told against all of them.
   */
  release(): void {
    if (this.held) this.sent = new Map(this.decisions);
    this.held = false;
  }

  /** Decides the exposures of `offered` (every server whose catalog is offered to Pi now). */
  plan(config: EffectiveConfig, offered: readonly BudgetCatalog[]): BudgetPlan {
    const window = this.window ?? ASSUMED_CONTEXT_WINDOW;
    const budget = budgetTokens(config.contextBudget, window);
    const supported = this.options.exposureSupported !== false;
    const sizes = offered.map(({ entry, catalog }) => sizesOf(config, entry, catalog));
    const deferred = deferredServers(
      sizes.map(({ entry, auto, direct }) => ({ name: entry.name, auto, direct })),
      budget,
      this.held ? this.decisions : undefined,
    );
    if (!supported && deferred.size > 0 && !this.warned) {
      this.warned = true;
      this.options.notice?.(
        `This Pi does not support tool exposure: MCP tools past the context budget (exposure auto) are offered directly (${[...deferred].join(", ")} would be deferred).`,
      );
    }
    const decisions = new Map<string, AutoDecision>();
    const servers = new Map<string, ServerContext>();
    const exposuresByServer = new Map<string, readonly Exposure[]>();
    for (const { entry, auto, tokens, settings, perTool, sizeByName } of sizes) {
      const decision: AutoDecision | undefined =
        auto > 0 || settings.has("auto") ? (deferred.has(entry.name) ? "deferred" : "direct") : undefined;
      if (decision !== undefined) decisions.set(entry.name, decision);
      const inForce = (setting: ExposureSetting): Exposure => (setting !== "auto" ? setting : supported ? decision! : "direct");
      const exposures = new Set([...settings].map(inForce));
      exposuresByServer.set(entry.name, [...exposures].sort());
      let declared = 0;
      // One lookup per tool: finding each tool in its catalog made a plan quadratic (6,000 tools blocked Pi for 240 ms).
      for (const [tool, setting] of perTool) if (inForce(setting) === "direct") declared += sizeByName.get(tool) ?? 0;
      servers.set(entry.name, {
        tokens,
        declared,
        setting: settings.size === 1 ? [...settings][0]! : "mixed",
        exposure: exposures.size === 1 ? [...exposures][0]! : "mixed",
        ...(decision !== undefined && { auto: supported ? decision : "direct" }),
      });
    }
    // A run under way keeps the decisions of servers that are not offered right now (a reconnect) for when they are back.
    if (this.held) for (const [name, decision] of this.decisions) if (!decisions.has(name)) decisions.set(name, decision);
    this.decisions = decisions;
    const resolved = new Map(sizes.map(({ entry, perTool }) => [entry.name, perTool]));
    const plan: BudgetPlan = {
      window,
      windowKnown: this.window !== undefined,
      budget,
      servers,
      exposures: (server) => exposuresByServer.get(server) ?? [],
      exposure: (entry, tool) => {
        const setting = resolved.get(entry.name)?.get(tool) ?? exposureOf(config, entry.definition, tool);
        if (setting !== "auto") return setting;
        return supported && decisions.get(entry.name) === "deferred" ? "deferred" : "direct";
      },
    };
    this.last = plan;
    return plan;
  }
}

/** One offered server as a plan reads it: each tool's exposure setting and size, and the sums. */
interface ServerSizes {
  readonly entry: ServerEntry;
  readonly auto: number;
  readonly direct: number;
  readonly tokens: number;
  readonly settings: ReadonlySet<ExposureSetting>;
  readonly perTool: ReadonlyMap<string, ExposureSetting>;
  /** Each tool name's size (the first tool of that name, as the declared sum reads it). */
  readonly sizeByName: ReadonlyMap<string, number>;
}

/** The sizes of each catalog, kept while the catalog lives and its settings stay: a sync of other servers costs one lookup for it. */
const sized = new WeakMap<readonly unknown[], { readonly config: EffectiveConfig; readonly sizes: ServerSizes }>();

function sizesOf(config: EffectiveConfig, entry: ServerEntry, catalog: BudgetCatalog["catalog"]): ServerSizes {
  const known = sized.get(catalog);
  if (known?.config === config && known.sizes.entry === entry) return known.sizes;
  let auto = 0;
  let direct = 0;
  let tokens = 0;
  const settings = new Set<ExposureSetting>();
  const perTool = new Map<string, ExposureSetting>();
  const sizeByName = new Map<string, number>();
  for (const { tool } of catalog) {
    const setting = exposureOf(config, entry.definition, tool.name);
    const size = definitionTokens(tool, entry.name);
    perTool.set(tool.name, setting);
    if (!sizeByName.has(tool.name)) sizeByName.set(tool.name, size);
    settings.add(setting);
    tokens += size;
    if (setting === "auto") auto += size;
    else if (setting === "direct") direct += size;
  }
  const sizes = { entry, auto, direct, tokens, settings, perTool, sizeByName };
  sized.set(catalog, { config, sizes });
  return sizes;
}

function validWindow(window: number | undefined): number | undefined {
  return typeof window === "number" && Number.isFinite(window) && window > 0 ? Math.floor(window) : undefined;
}

/** A server's status with its place in the budget (and its tools counted by the exposure in force). */
export function withBudget(
  status: ConnectionStatus,
  plan: BudgetPlan | undefined,
  entry: ServerEntry | undefined,
  tools: readonly Tool[],
): ConnectionStatus {
  const context = plan?.servers.get(status.name);
  if (!plan || !context || !entry) return status;
  const exposures: Partial<Record<Exposure, number>> = {};
  for (const tool of tools) {
    const exposure = plan.exposure(entry, tool.name);
    exposures[exposure] = (exposures[exposure] ?? 0) + 1;
  }
  return { ...status, exposures, context: { ...context, budget: plan.budget, window: plan.window, windowKnown: plan.windowKnown } };
}

/** `auto: deferred, 14,200 tokens, budget 20,000 of 200,000`; an exposure set explicitly: `deferred (set), 14,200 tokens`. */
export function contextText(context: ServerContext): string {
  const tokens = `${formatTokens(context.tokens)} tokens`;
  const budget =
    context.budget === undefined || context.window === undefined
      ? ""
      : `, budget ${formatTokens(context.budget)} of ${formatTokens(context.window)}${context.windowKnown ? "" : " (the model's context window is not known)"}`;
  if (context.auto !== undefined) {
    const others = context.setting === "mixed" ? " (some tools set explicitly)" : "";
    return `auto: ${context.auto}${others}, ${tokens}${budget}`;
  }
  return `${context.exposure} (set), ${tokens}`;
}

/**
 * The estimated tokens of each server's known catalog (never connecting):
 * the catalog the start recorded for settings stamp `digest` had, else the
 * newest recorded start that offered the server. Servers never recorded are
 * missing.
 */
export function knownCatalogTokens(agentDir: string, digest: string | undefined): Map<string, number> {
  const tokens = new Map<string, number>();
  const index = readIndex(agentDir);
  if (!index) return tokens;
  const records = [...index.starts].sort((a, b) => b.savedAt - a.savedAt);
  if (digest !== undefined) {
    const own = records.find((record) => record.key === keyed(index.salt, digest));
    if (own) records.unshift(own);
  }
  for (const record of records)
    for (const server of record.servers) {
      if (tokens.has(server.name)) continue;
      const file = readCatalog(agentDir, server.catalog, server.name);
      if (file) tokens.set(server.name, catalogTokens(file.tools, server.name));
    }
  return tokens;
}
