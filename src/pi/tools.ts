import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import type { BridgedTool, ToolSink } from "../runtime/host.ts";
import type { ToolOutcome } from "../kernel/services.ts";

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

/** An MCP error result becomes a Pi error result: Pi marks a tool that throws as failed. */
export function toPiResult(outcome: ToolOutcome) {
  if (outcome.isError) {
    const text = outcome.content.flatMap((item) => (item.type === "text" ? [item.text] : [])).join("\n");
    throw new Error(text || "the MCP tool reported an error");
  }
  return { content: outcome.content, details: outcome.details };
}

/** Registers bridged tools with Pi and withdraws the ones that went away. */
export function piToolSink(pi: ExtensionAPI): ToolSink {
  return {
    register(tools) {
      for (const bridged of tools) {
        const annotations = annotationsOf(bridged);
        pi.registerTool({
          name: bridged.name,
          label: `${bridged.server}: ${bridged.tool.title ?? bridged.tool.name}`,
          description: bridged.tool.description ?? `MCP tool ${bridged.tool.name} from ${bridged.server}`,
          // The exact schema the server advertised; it is compiled only when the tool is used.
          parameters: (isObject(bridged.tool.inputSchema) ? bridged.tool.inputSchema : { type: "object" }) as never,
          ...(annotations && { annotations }),
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
            ),
        });
      }
      // A tool that comes back after being withdrawn must be declared to the model again.
      const active = new Set(pi.getActiveTools());
      const missing = tools.map((tool) => tool.name).filter((name) => !active.has(name));
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

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
