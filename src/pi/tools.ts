import { VERSION, type ExtensionAPI, type ToolDefinition } from "@earendil-works/pi-coding-agent";
import type { Tool } from "@modelcontextprotocol/client";
import { isRecord } from "../safety/keys.ts";
import { schemaForPi } from "../runtime/pi-schema.ts";
import type { ToolSink } from "../runtime/host.ts";
import type { CallOptions, ToolOutcome } from "../kernel/services.ts";
import type { Exposure } from "../kernel/settings.ts";
import { namedServerTool, type ToolRendering, type ToolRenderers } from "../kernel/pi-part.ts";
import { RegistrationQueue, type QueuedTool } from "./registration-queue.ts";

/** A server tool as Pi registers it: its Pi name, its server, its MCP definition and how the model reaches it. */
export interface PiServerTool {
  readonly name: string;
  readonly server: string;
  readonly tool: Tool;
  readonly exposure: Exposure;
}

/** Runs one call of a server tool (the host routes it to the server). */
export type ServerToolCall = (args: Record<string, unknown>, options: CallOptions) => Promise<ToolOutcome>;

/** Only the four MCP hints Pi knows; they are shown as the server's claims and grant nothing. */
function annotationsOf(tool: Tool): Record<string, boolean> | undefined {
  const source = tool.annotations as Record<string, unknown> | undefined;
  if (!source) return undefined;
  const hints: Record<string, boolean> = {};
  for (const key of ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"]) {
    if (typeof source[key] === "boolean") hints[key] = source[key] as boolean;
  }
  return Object.keys(hints).length > 0 ? hints : undefined;
}

/**
 * An MCP error result becomes a Pi error result. Pi 0.99+ takes a returned
 * `isError`, which keeps the whole result (images, details, a spill path);
 * older Pi marks only a tool that throws as failed, so there the text is thrown.
 */
export function toPiResult(outcome: ToolOutcome, pi: ExtensionAPI, details: Record<string, unknown> | undefined) {
  if (outcome.isError && !supportsExposure(pi)) {
    const text = outcome.content.flatMap((item) => (item.type === "text" ? [item.text] : [])).join("\n");
    throw new Error(text || "the MCP tool reported an error");
  }
  return { content: outcome.content, details, ...(outcome.isError && { isError: true }) };
}

/**
 * The details Pi keeps of a server tool's result. A session keeps every
 * result for good (and clones its transcript for every request), so a
 * result whose details only name its server and tool, which its Pi name
 * already says exactly (`mcp__<server>__<tool>`, neither sanitized nor
 * suffixed), keeps none, as Pi's own tools: its row still names both.
 */
export function keptDetails(details: Record<string, unknown>, piName: string): Record<string, unknown> | undefined {
  const keys = Object.keys(details);
  if (keys.length !== 2 || typeof details.server !== "string" || typeof details.tool !== "string") return details;
  const named = namedServerTool(piName);
  return named.server === details.server && named.tool === details.tool ? undefined : details;
}

/** The Pi tools that reach tools the model is not declared: activated when some MCP tool needs them. */
const REACHING_TOOL: Readonly<Partial<Record<Exposure, string>>> = { deferred: "tool_search", codemode: "codemode" };

/**
 * Pi 0.99+ knows tool exposure; 0.84 does not. The same release lets a tool
 * return an `isError` result instead of throwing. Read from the running Pi's
 * version, so it is known while Pi loads the extension too.
 */
export function supportsExposure(_pi?: ExtensionAPI, version: string = VERSION): boolean {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  return major > 0 || minor >= 99;
}

/** How a tool of `exposure` is registered in a Pi that has (or lacks) exposure: deferred and codemode become direct there, hidden ones are left out. */
export function effectiveExposure(exposure: Exposure, supported: boolean): Exposure | "skip" {
  if (exposure === "direct" || supported) return exposure;
  return exposure === "hidden" ? "skip" : "direct";
}

/**
 * The Pi tool definition of a server tool (also what the Pi entry registers
 * from a persisted catalog while Pi loads, so both are the same tool): its
 * exact schema, the server's four hints, the exposure (with a namespace),
 * and an `execute` that maps the outcome to Pi's result.
 */
export function piToolDefinition(
  pi: ExtensionAPI,
  tool: PiServerTool,
  exposure: Exposure,
  call: ServerToolCall,
  renderers?: ToolRenderers,
): ToolDefinition {
  const annotations = annotationsOf(tool.tool);
  return {
    ...(exposure !== "direct" && { exposure, namespace: { name: `mcp__${tool.server}`, aliases: [tool.server] } }),
    name: tool.name,
    label: `${tool.server}: ${tool.tool.title ?? tool.tool.name}`,
    description: tool.tool.description ?? `MCP tool ${tool.tool.name} from ${tool.server}`,
    // The schema the server advertised, without its patterns (Pi would run them in a backtracking engine;
    // pi-mcp checks the exact schema, patterns in linear time); it is compiled only when the tool is used.
    parameters: schemaForPi(isRecord(tool.tool.inputSchema) ? tool.tool.inputSchema : { type: "object" }) as never,
    ...(annotations && { annotations }),
    ...renderers,
    execute: async (_toolCallId, params, signal, onUpdate, ctx) => {
      const outcome = await call((params ?? {}) as Record<string, unknown>, {
        signal,
        interactive: ctx?.hasUI === true && (ctx.mode === "tui" || ctx.mode === "rpc"),
        onProgress: (progress) =>
          onUpdate?.({
            content: [{ type: "text", text: progressText(progress) }],
            details: { server: tool.server, tool: tool.tool.name, progress },
          }),
      });
      return toPiResult(outcome, pi, keptDetails(outcome.details, tool.name));
    },
  } as ToolDefinition;
}

/** The sink Pi's entry gives the host: its registrations run in time slices (see registration-queue.ts). */
export interface PiToolSink extends ToolSink {
  /** Resolves once every registration queued so far has reached Pi. */
  idle(): Promise<void>;
  /** Every tool registered so far becomes active at once (registration goes on). */
  activateRegistered(): void;
  /** The session ended: what is still queued is dropped (Pi's API of that session is stale). */
  close(): void;
}

/**
 * Registers bridged tools with Pi and withdraws the ones that went away.
 * `notice` tells the person once when Pi cannot honour a configured exposure.
 * `rendering` draws the tool rows (the MCP Observer UI); `registered` is told of each tool that reached Pi.
 */
export function piToolSink(
  pi: ExtensionAPI,
  notice: (text: string) => void = () => {},
  rendering?: ToolRendering,
  registered?: () => void,
): PiToolSink {
  let warned = false;
  const supported = supportsExposure(pi);
  const queue = new RegistrationQueue(pi, {
    onError: (name, error) => notice(`Pi refused the MCP tool ${name}: ${error instanceof Error ? error.message : String(error)}`),
    ...(registered && { onRegistered: registered }),
  });
  /** Where Pi has no exposure, deferred and codemode tools are declared directly and hidden ones not registered (said once). */
  const exposureIn = (exposure: Exposure): Exposure | "skip" => {
    const effective = effectiveExposure(exposure, supported);
    if (effective !== exposure && !warned) {
      warned = true;
      notice(
        `This Pi does not support tool exposure: MCP tools configured as deferred or codemode are offered directly, and hidden ones are not registered.`,
      );
    }
    return effective;
  };
  /** A direct tool that comes back after being withdrawn is declared to the model again; tool_search / codemode are active when some MCP tool is reached through them. */
  const activation = (tools: readonly PiServerTool[]) => {
    const direct: string[] = [];
    const reaching = new Set<string>();
    for (const tool of tools) {
      const exposure = exposureIn(tool.exposure);
      if (exposure === "direct") direct.push(tool.name);
      const reach = exposure === "skip" ? undefined : REACHING_TOOL[exposure];
      if (reach) reaching.add(reach);
    }
    return { direct, reaching: [...reaching] };
  };
  return {
    register(tools) {
      const queued: QueuedTool[] = [];
      for (const bridged of tools) {
        const exposure = exposureIn(bridged.exposure);
        if (exposure === "skip") continue;
        queued.push({
          name: bridged.name,
          definition: () =>
            piToolDefinition(
              pi,
              bridged,
              exposure,
              (args, options) => bridged.execute(args, options),
              rendering?.serverTool(bridged.server, bridged.tool.name, bridged.name),
            ),
        });
      }
      const { direct, reaching } = activation(tools);
      queue.register(queued, direct, reaching);
    },
    adopt(tools) {
      const { direct, reaching } = activation(tools);
      queue.activate(direct, reaching);
    },
    deactivate(names) {
      queue.deactivate(names);
    },
    idle: () => queue.idle(),
    activateRegistered: () => queue.activateRegistered(),
    close: () => queue.close(),
  };
}

function progressText(progress: { progress: number; total?: number; message?: string }): string {
  const amount = progress.total ? `${progress.progress}/${progress.total}` : `${progress.progress}`;
  return `progress ${amount}${progress.message ? `: ${progress.message}` : ""}`;
}
