import { isRecord } from "../safety/keys.ts";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import type { BridgedTool, ToolSink } from "../runtime/host.ts";
import { schemaForPi } from "../runtime/schemas.ts";
import type { ToolOutcome } from "../kernel/services.ts";
import type { Exposure } from "../kernel/settings.ts";
import type { ToolRendering } from "../kernel/pi-part.ts";

/** Only the four MCP hints Pi knows; they are shown as the server's claims and grant nothing. */
function annotationsOf(bridged: BridgedTool): Record<string, boolean> | undefined {
  const source = bridged.tool.annotations as Record<string, unknown> | undefined;
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
export function toPiResult(outcome: ToolOutcome, pi: ExtensionAPI) {
  if (outcome.isError && !supportsExposure(pi)) {
    const text = outcome.content.flatMap((item) => (item.type === "text" ? [item.text] : [])).join("\n");
    throw new Error(text || "the MCP tool reported an error");
  }
  return { content: outcome.content, details: outcome.details, ...(outcome.isError && { isError: true }) };
}

/** The Pi tools that reach tools the model is not declared: activated when some MCP tool needs them. */
const REACHING_TOOL: Readonly<Partial<Record<Exposure, string>>> = { deferred: "tool_search", codemode: "codemode" };

/** What each Pi answered (its version does not change while it runs). */
const exposureSupport = new WeakMap<ExtensionAPI, boolean>();

/**
 * Pi 0.99+ knows tool exposure (its tool list reports it); 0.84 does not. The
 * same release lets a tool return an `isError` result instead of throwing.
 */
export function supportsExposure(pi: ExtensionAPI): boolean {
  let known = exposureSupport.get(pi);
  if (known === undefined) exposureSupport.set(pi, (known = pi.getAllTools().some((tool) => (tool as { exposure?: unknown }).exposure !== undefined)));
  return known;
}


/**
 * Registers bridged tools with Pi and withdraws the ones that went away.
 * `notice` tells the person once when Pi cannot honour a configured exposure.
 * `rendering` draws the tool rows (the MCP Observer UI).
 */
export function piToolSink(pi: ExtensionAPI, notice: (text: string) => void = () => {}, rendering?: ToolRendering): ToolSink {
  let warned = false;
  /** Where Pi has no exposure, deferred and codemode tools are declared directly and hidden ones not registered. */
  const effectiveExposure = (exposure: Exposure): Exposure | "skip" => {
    if (exposure === "direct" || supportsExposure(pi)) return exposure;
    if (!warned) {
      warned = true;
      notice(`This Pi does not support tool exposure: MCP tools configured as deferred or codemode are offered directly, and hidden ones are not registered.`);
    }
    return exposure === "hidden" ? "skip" : "direct";
  };
  return {
    register(tools) {
      const direct: string[] = [];
      const reaching = new Set<string>();
      for (const bridged of tools) {
        const exposure = effectiveExposure(bridged.exposure);
        if (exposure === "skip") continue;
        if (exposure === "direct") direct.push(bridged.name);
        const reach = REACHING_TOOL[exposure];
        if (reach) reaching.add(reach);
        const annotations = annotationsOf(bridged);
        pi.registerTool({
          ...(exposure !== "direct" && { exposure, namespace: { name: `mcp__${bridged.server}`, aliases: [bridged.server] } }),
          name: bridged.name,
          label: `${bridged.server}: ${bridged.tool.title ?? bridged.tool.name}`,
          description: bridged.tool.description ?? `MCP tool ${bridged.tool.name} from ${bridged.server}`,
          // The schema the server advertised, without its patterns (Pi would run them in a backtracking engine;
          // pi-mcp checks the exact schema, patterns in linear time); it is compiled only when the tool is used.
          parameters: schemaForPi(isRecord(bridged.tool.inputSchema) ? bridged.tool.inputSchema : { type: "object" }) as never,
          ...(annotations && { annotations }),
          ...rendering?.serverTool(bridged.server, bridged.tool.name, bridged.name),
          execute: async (_toolCallId, params, signal, onUpdate, ctx) =>
            toPiResult(
              await bridged.execute((params ?? {}) as Record<string, unknown>, {
                signal,
                interactive: ctx?.hasUI === true && (ctx.mode === "tui" || ctx.mode === "rpc"),
                onProgress: (progress) =>
                  onUpdate?.({
                    content: [{ type: "text", text: progressText(progress) }],
                    details: { server: bridged.server, tool: bridged.tool.name, progress },
                  }),
              }),
              pi,
            ),
        });
      }
      // A direct tool that comes back after being withdrawn must be declared to the model again,
      // and tool_search / codemode must be active when some MCP tool is reached through them.
      const active = new Set(pi.getActiveTools());
      const available = new Set(pi.getAllTools().map((tool) => tool.name));
      const missing = [...direct, ...[...reaching].filter((name) => available.has(name))].filter((name) => !active.has(name));
      if (missing.length > 0) pi.setActiveTools([...active, ...missing]);
    },
    deactivate(names) {
      const gone = new Set(names);
      pi.setActiveTools(pi.getActiveTools().filter((name) => !gone.has(name)));
    },
  };
}

function progressText(progress: { progress: number; total?: number; message?: string }): string {
  const amount = progress.total ? `${progress.progress}/${progress.total}` : `${progress.progress}`;
  return `progress ${amount}${progress.message ? `: ${progress.message}` : ""}`;
}
