/*
 * A server's prompt catalog: listed on demand (every page), kept per client
 * for completion while it is fresh, dropped on `notifications/prompts/list_changed`.
 */
import type { Client } from "@modelcontextprotocol/client";
import type { LiveServer } from "../../src/kernel/host.ts";
import { PiMcpError } from "../../src/kernel/errors.ts";
import { clientState } from "../../src/kernel/host-state.ts";
import { isRecord } from "../../src/safety/keys.ts";

/** How long a listed prompt catalog serves completion before it is listed again. */
export const PROMPT_LIST_MAX_AGE_MS = 30_000;

export interface PromptArgument {
  readonly name: string;
  readonly description?: string;
  readonly required?: boolean;
}

export interface PromptInfo {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly arguments: readonly PromptArgument[];
}

/**
 * Prompt catalogs per client: served to completion while fresh, dropped on
 * `notifications/prompts/list_changed`. Process-wide, so the handler the
 * session that created the client set drops what a later session cached.
 */
const catalogs = clientState<{ readonly at: number; readonly prompts: Promise<PromptInfo[]> }>("prompts.catalogs");

/** The server said its prompts changed: the next reader lists them again. */
export function forgetPrompts(client: Client): void {
  catalogs.delete(client);
}

/**
 * The server's prompts, every page (at most 1,000; a repeated cursor is an
 * error). `maxAgeMs` lets a recent listing answer (completion); the command
 * always lists afresh.
 */
export async function listPrompts(connection: LiveServer, { maxAgeMs = 0 }: { maxAgeMs?: number } = {}): Promise<PromptInfo[]> {
  const client = await connection.connected();
  if (!client.getServerCapabilities()?.prompts) return [];
  const cached = catalogs.get(client);
  if (cached && Date.now() - cached.at <= maxAgeMs) return cached.prompts;
  // A server that declares prompts but does not implement prompts/list (-32601) has none.
  const prompts = connection.list("prompts/list").then((items) => validPrompts(items, connection));
  catalogs.set(client, { at: Date.now(), prompts });
  prompts.catch(() => {
    if (catalogs.get(client)?.prompts === prompts) catalogs.delete(client);
  });
  return prompts;
}

function validPrompts(value: unknown, connection: LiveServer): PromptInfo[] {
  if (!Array.isArray(value)) throw new PiMcpError("invalid_response", `${connection.name} prompts/list returned no prompts array`);
  const prompts: PromptInfo[] = [];
  for (const item of value) {
    if (!isRecord(item) || typeof item.name !== "string" || item.name === "") {
      connection.log.append("[pi-mcp] skipped a prompt without a name\n");
      continue;
    }
    const args = Array.isArray(item.arguments)
      ? item.arguments.filter((arg): arg is Record<string, unknown> => isRecord(arg) && typeof arg.name === "string" && arg.name !== "")
      : [];
    prompts.push({
      name: item.name,
      ...(typeof item.title === "string" && { title: item.title }),
      ...(typeof item.description === "string" && { description: item.description }),
      arguments: args.map((arg) => ({
        name: arg.name as string,
        ...(typeof arg.description === "string" && { description: arg.description }),
        ...(arg.required === true && { required: true }),
      })),
    });
  }
  return prompts;
}
