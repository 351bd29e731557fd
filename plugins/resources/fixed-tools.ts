/*
 * The resources plugin's fixed Pi tools: list_mcp_resources,
 * list_mcp_resource_templates and read_mcp_resource. They reach Pi with the
 * first connected server that offers resources and are active only while one
 * is connected; each names its server in every line it returns.
 */
import { describeError, PiMcpError } from "../../src/kernel/errors.ts";
import type { PluginHost } from "../../src/kernel/host.ts";
import { untilAborted } from "../../src/kernel/async.ts";
import { RESOURCE_TOOLS } from "../../src/kernel/pi-part.ts";
import type { CatalogItem, ResourceListMethod } from "../../src/kernel/protocol.ts";
import type { FixedTool } from "../../src/kernel/services.ts";
import type { LiveConnection } from "../../src/kernel/types.ts";
import { keyedRecord } from "../../src/safety/keys.ts";
import type { ResourcesState } from "./state.ts";

/** The fixed tools reach Pi with the first connected server that offers resources. */
export function defineTools(state: ResourcesState): void {
  if (state.toolsDefined || !state.host) return;
  state.toolsDefined = true;
  for (const tool of fixedTools(state, state.host)) state.host.context.services.piTools?.define(tool);
}

/** The fixed tools are active while some connected server offers resources. */
export function updateToolActivity(state: ResourcesState): void {
  const any = state.connections.size > 0;
  for (const name of Object.values(RESOURCE_TOOLS)) state.host?.context.services.piTools?.setActive(name, any);
}

/** The three fixed tools. */
function fixedTools(state: ResourcesState, host: PluginHost): FixedTool[] {
  const serverArg = { type: "string", description: "MCP server name (omit for all servers)" };
  const pick = (server: unknown): [string, LiveConnection][] => {
    // A session that handed its connections on (or ended) starts nothing through them.
    const current = [...state.connections].filter(([, connection]) => connection.isCurrent());
    if (server === undefined) return current.sort(([a], [b]) => a.localeCompare(b));
    const found = current.find(([name]) => name === String(server));
    if (!found) throw new PiMcpError("not_found", `no connected MCP server "${String(server)}" offers resources`);
    return [found];
  };
  /**
   * One list across the chosen servers, from each connection's catalog. A
   * server whose list fails gets a line naming the method and the cause; the
   * others are listed all the same. Asking one server that fails is an error.
   */
  const list = async (method: ResourceListMethod, key: string, args: Record<string, unknown>, signal: AbortSignal | undefined) => {
    const lines: string[] = [];
    const found = keyedRecord<readonly CatalogItem[]>();
    const failures = keyedRecord<string>();
    const chosen = pick(args.server);
    for (const [server, connection] of chosen) {
      let items: readonly CatalogItem[];
      try {
        items = await connection.request(method, () => untilAborted(connection.resourceList(method), signal), { signal });
      } catch (error) {
        if (chosen.length === 1 || signal?.aborted) throw error;
        failures[server] = describeError(error);
        lines.push(`${server}: ${describeError(error)}`);
        continue;
      }
      found[server] = items;
      for (const item of items)
        lines.push(
          `${server}: ${String(item.uri ?? item.uriTemplate)}${item.name ? ` (${String(item.name)}${item.mimeType ? `, ${String(item.mimeType)}` : ""})` : ""}${item.description ? ` — ${String(item.description)}` : ""}`,
        );
    }
    // Long listings are cut to Pi's limits like any result; the whole listing goes to a Result Spill.
    const origin = { server: typeof args.server === "string" ? args.server : "all-servers", operation: method };
    const details = { [key]: found, ...(Object.keys(failures).length > 0 && { failures }) };
    return host.results.finish(origin, {
      blocks: [],
      trailer: [{ type: "text", text: lines.join("\n") || "No resources." }],
      details,
      isError: false,
    });
  };
  return [
    {
      name: RESOURCE_TOOLS.list,
      label: "MCP: list resources",
      description: "List the resources that connected MCP servers offer (server: uri (name, type) — description).",
      parameters: { type: "object", properties: { server: serverArg } },
      execute: (args, options) => list("resources/list", "resources", args, options.signal),
    },
    {
      name: RESOURCE_TOOLS.templates,
      label: "MCP: list resource templates",
      description: "List the URI templates of resources that connected MCP servers can read.",
      parameters: { type: "object", properties: { server: serverArg } },
      execute: (args, options) => list("resources/templates/list", "resourceTemplates", args, options.signal),
    },
    {
      name: RESOURCE_TOOLS.read,
      label: "MCP: read resource",
      description: "Read one resource from an MCP server by its URI.",
      parameters: {
        type: "object",
        properties: { server: { type: "string", description: "MCP server name" }, uri: { type: "string", description: "Resource URI" } },
        required: ["server", "uri"],
      },
      async execute(args, options) {
        const [[server, connection]] = pick(args.server) as [[string, LiveConnection]];
        const uri = String(args.uri);
        const result = await connection.request(
          `resources/read ${uri}`,
          (client) =>
            client.readResource({ uri }, { timeout: connection.requestTimeoutMs, ...(options.signal && { signal: options.signal }) }),
          { signal: options.signal },
        );
        const origin = { server, operation: uri };
        const content = result.contents.map((resource) => ({ type: "resource", resource }));
        return host.results.finish(origin, await host.results.map(origin, { content }, { server, uri }));
      },
    },
  ];
}
