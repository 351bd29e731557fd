/*
 * MCP Prompts: `/mcp prompt <server> <prompt> [--arg NAME=VALUE]...` gets a
 * prompt and adds its messages to the conversation.
 *
 * Delivery and persistence: the expanded messages become one Pi custom
 * message (customType `pi-mcp.prompt`) whose details are the versioned
 * record `{ version: 1, server, prompt, arguments, messages }`. It is sent
 * without triggering a turn, so Pi stores it as a `custom_message` entry on
 * the active branch at once (or right after a turn that is running). Pi
 * rebuilds the model context from the active branch, so the messages reach
 * the model with the next turn, survive `/resume`, follow `/fork` and `/tree`
 * to the branches that hold them, and nothing of ours replays them again
 * (which would deliver them twice).
 */
import type { CommandEnvironment, CommandSpec } from "../../src/kernel/commands.ts";
import { usage } from "../../src/kernel/commands.ts";
import { describeError, PiMcpError } from "../../src/kernel/errors.ts";
import type { Kernel, KernelPlugin } from "../../src/kernel/kernel.ts";
import type { HostContext, LiveConnection, MappedBlock, MappedResult, PiContent } from "../../src/kernel/types.ts";
import type { LiveServer, PluginHost } from "../../src/kernel/host.ts";
import { inBackground } from "../../src/kernel/async.ts";
import { clientState } from "../../src/kernel/host-state.ts";
import { ANY_RESULT, base64Bytes } from "../../src/kernel/protocol.ts";
import { MESSAGE_TYPES } from "../../src/kernel/pi-part.ts";
import { safeText } from "../../src/safety/text.ts";
import { completePromptLine } from "./completion.ts";
import { isRecord, keyedRecord } from "../../src/safety/keys.ts";
import { forgetPrompts, listPrompts, type PromptInfo } from "./catalog.ts";

/** The custom message type of expanded prompts in Pi sessions. */
export const PROMPT_MESSAGE_TYPE = MESSAGE_TYPES.prompt;
/** The version of the `details` record; readers ignore versions they do not know. */
export const PROMPT_RECORD_VERSION = 1;

/** One prompt message as persisted for presentation: its role, its model-visible text, its images' metadata. */
export interface PromptMessageRecord {
  readonly role: string;
  readonly text: string;
  readonly images: readonly { readonly mimeType: string; readonly bytes: number }[];
}

/** The versioned record kept in the custom message's details. */
export interface PromptRecord {
  readonly version: typeof PROMPT_RECORD_VERSION;
  readonly server: string;
  readonly prompt: string;
  readonly arguments: Readonly<Record<string, string>>;
  readonly description?: string;
  readonly messages: readonly PromptMessageRecord[];
  /** Where the complete text went when it was cut to Pi's limit. */
  readonly spillPath?: string;
}

export class PromptsPlugin implements KernelPlugin {
  readonly name = "prompts";
  readonly commands: readonly CommandSpec[] = [promptCommand];

  apply(kernel: Kernel): void {
    kernel.hooks.clientCreated.tap(this.name, (live) => {
      live.client.setNotificationHandler("notifications/prompts/list_changed", () => forgetPrompts(live.client));
    });
    kernel.hooks.serverConnected.tap(this.name, (live) => followPromptChanges(live));
  }
}

/** Clients with an open prompt list-change subscription (process-wide: a later session's copy of this module must see it). */
const following = clientState<true>("prompts.following");

/**
 * 2026-07-28 peers announce list changes only on a `subscriptions/listen`
 * stream: open one for prompts (once per client, also when a later session
 * adopts it). 2025-era peers send the notice unasked.
 */
function followPromptChanges(live: LiveConnection): void {
  const client = live.client;
  if (client.getProtocolEra() !== "modern" || !client.getServerCapabilities()?.prompts?.listChanged || following.has(client)) return;
  following.set(client, true);
  const stopFollowing = (error?: unknown) => {
    following.delete(client);
    if (error !== undefined) live.log(`[pi-mcp] following prompt list changes failed: ${describeError(error)}\n`);
  };
  inBackground(async () => {
    const stream = await client.listen({ promptsListChanged: true }, { timeout: live.requestTimeoutMs });
    await stream.closed;
    stopFollowing();
  }, stopFollowing);
}

export const promptCommand: CommandSpec = {
  name: "prompt",
  surfaces: ["pi"],
  summary: "Run an MCP prompt: its messages join the conversation for your next message",
  usage: "prompt <server> <prompt> [--arg NAME=VALUE]...",
  complete: completePromptLine,
  positionals: [
    { name: "server", description: "Server name", required: true },
    { name: "prompt", description: "Prompt name", required: true },
  ],
  options: { arg: { type: "string", multiple: true, description: "A prompt argument (repeat for each)", valueHint: "NAME=VALUE" } },
  examples: [
    { line: "prompt docs review --arg file=src/index.ts", description: "Add the messages of docs' review prompt for your next message" },
    { line: "prompt docs summary", description: "A prompt without arguments (Tab completes prompt and argument names)" },
  ],
  async run(input, env) {
    const [server, name] = input.positionals as [string, string];
    const given = parseArgPairs(input.options.arg);
    const host = await requireHost(env);
    const session = host.context.services.session;
    if (!session?.addMessage) throw new PiMcpError("not_supported", "prompt: this surface has no conversation to add the messages to");
    const connection = await connectedServer(host, server);
    const prompts = await connection.request("prompts/list", () => listPrompts(connection));
    const prompt = prompts.find((candidate) => candidate.name === name);
    if (!prompt) {
      const known = prompts.map((candidate) => candidate.name);
      throw new PiMcpError(
        "not_found",
        safeText(
          `server "${server}" has no prompt "${name}"${known.length ? ` (prompts: ${shortList(known)})` : " (it offers no prompts)"}`,
          host.context.redact,
        ),
      );
    }
    checkArguments(prompt, given, server, host.context);
    // The person runs this in the foreground: a server request it causes (elicitation, say) may ask them.
    const leave = connection.enterCall({ signal: undefined, interactive: host.context.services.ui !== undefined });
    const raw = await connection
      .request(
        "prompts/get",
        async (client) =>
          (await client.request({ method: "prompts/get", params: { name, arguments: given } }, ANY_RESULT, {
            timeout: connection.requestTimeoutMs,
          })) as Record<string, unknown>,
      )
      .finally(leave);
    const message = await expandPrompt(host, server, prompt, given, raw);
    if (message.record.messages.length === 0)
      throw new PiMcpError(
        "invalid_response",
        safeText(`${server} prompts/get: prompt "${name}" returned no messages; nothing was added`, host.context.redact),
      );
    session.addMessage({ customType: PROMPT_MESSAGE_TYPE, content: message.content, details: { ...message.record } });
    const count = message.record.messages.length;
    return {
      exitCode: 0,
      output: safeText(
        `Added MCP prompt "${name}" from "${server}" (${count} message${count === 1 ? "" : "s"}) to the conversation; the model sees it with your next message.`,
        host.context.redact,
      ),
    };
  },
};

/** `--arg NAME=VALUE` pairs: the first `=` splits, names are unique and non-empty. */
export function parseArgPairs(values: unknown): Record<string, string> {
  const pairs = keyedRecord<string>();
  for (const value of Array.isArray(values) ? (values as string[]) : typeof values === "string" ? [values] : []) {
    const split = value.indexOf("=");
    const key = split === -1 ? value : value.slice(0, split);
    if (split <= 0) throw usage(promptCommand, `--arg takes NAME=VALUE, got "${value}"`);
    if (Object.hasOwn(pairs, key)) throw usage(promptCommand, `--arg ${key} is given twice`);
    pairs[key] = value.slice(split + 1);
  }
  return pairs;
}

/** The given arguments against the prompt's declared ones: none unknown, every required one present. */
function checkArguments(prompt: PromptInfo, given: Readonly<Record<string, string>>, server: string, host: HostContext): void {
  const declared = new Set(prompt.arguments.map((arg) => arg.name));
  const line = `prompt ${server} ${prompt.name}${prompt.arguments.map((arg) => (arg.required ? ` --arg ${arg.name}=VALUE` : ` [--arg ${arg.name}=VALUE]`)).join("")}`;
  const fail = (problem: string) => new PiMcpError("usage", safeText(`prompt: ${problem}\nusage: ${line}`, host.redact));
  const unknown = Object.keys(given).filter((key) => !declared.has(key));
  if (unknown.length > 0) {
    const names = prompt.arguments.map((arg) => arg.name);
    throw fail(
      `prompt "${prompt.name}" has no argument ${unknown.map((key) => `"${key}"`).join(", ")} (${names.length ? `arguments: ${names.join(", ")}` : "it takes no arguments"})`,
    );
  }
  const missing = prompt.arguments.filter((arg) => arg.required && !Object.hasOwn(given, arg.name)).map((arg) => arg.name);
  if (missing.length > 0) throw fail(`prompt "${prompt.name}" needs ${missing.map((key) => `--arg ${key}=VALUE`).join(" ")}`);
}

/**
 * Turns a prompts/get result into Pi content: a provenance header, then each
 * message under its role, its blocks mapped by the same result mappers as
 * tool results (third-party mappers included) and kept within Pi's limits.
 */
export async function expandPrompt(
  host: PluginHost,
  server: string,
  prompt: PromptInfo,
  args: Readonly<Record<string, string>>,
  raw: Record<string, unknown>,
): Promise<{ content: PiContent[]; record: PromptRecord }> {
  const messages = (Array.isArray(raw.messages) ? raw.messages : []).filter(isRecord);
  const owners: number[] = [];
  const blocks: Record<string, unknown>[] = [];
  messages.forEach((message, index) => {
    const content = Array.isArray(message.content) ? message.content : [message.content];
    for (const block of content) {
      if (!isRecord(block) || typeof block.type !== "string") continue;
      blocks.push(block);
      owners.push(index);
    }
  });
  const origin = { server, operation: prompt.name };
  const mapped = await host.results.map(origin, { ...raw, content: blocks }, {});
  const roles = messages.map((message) => (typeof message.role === "string" ? message.role : "user"));
  const description = typeof raw.description === "string" ? raw.description : prompt.description;
  const argText = Object.entries(args)
    .map(([key, value]) => `${key}=${JSON.stringify(value)}`)
    .join(", ");
  const header = `[MCP prompt "${prompt.name}" from server "${server}"${argText ? ` (${argText})` : ""}: ${roles.length} message${roles.length === 1 ? "" : "s"}, run by the person with /mcp prompt]`;
  const label = (text: string): MappedBlock => ({ source: { type: "pi-mcp.label" }, output: [{ type: "text", text }] });
  const labelled: MappedBlock[] = [label(header)];
  roles.forEach((role, index) => {
    labelled.push(label(`[${role}]`));
    mapped.blocks.forEach((block, at) => {
      if (owners[at] === index) labelled.push(block);
    });
  });
  const outcome = await host.results.finish(origin, { ...mapped, blocks: labelled } satisfies MappedResult);
  const record: PromptRecord = {
    version: PROMPT_RECORD_VERSION,
    server,
    prompt: prompt.name,
    arguments: { ...args },
    ...(description !== undefined && { description }),
    messages: roles.map((role, index) => {
      const output = mapped.blocks.filter((_, at) => owners[at] === index).flatMap((block) => block.output ?? []);
      return {
        role,
        text: host.context.truncate(output.flatMap((item) => (item.type === "text" ? [item.text] : [])).join("\n")).text,
        images: output.flatMap((item) => (item.type === "image" ? [{ mimeType: item.mimeType, bytes: base64Bytes(item.data) }] : [])),
      };
    }),
    ...(typeof outcome.details.spillPath === "string" && { spillPath: outcome.details.spillPath }),
  };
  return { content: joinTexts(outcome.content), record };
}

/** Adjacent text items become one, so the model reads each message as a whole. */
function joinTexts(content: readonly PiContent[]): PiContent[] {
  const joined: PiContent[] = [];
  for (const item of content) {
    const last = joined.at(-1);
    if (item.type === "text" && last?.type === "text") joined[joined.length - 1] = { type: "text", text: `${last.text}\n${item.text}` };
    else joined.push(item);
  }
  return joined;
}

function requireHost(env: CommandEnvironment): Promise<PluginHost> {
  if (!env.runtime) throw new PiMcpError("needs_session", "prompt: this command needs a running Pi session");
  return env.runtime.host();
}

/** The server's connection once it is connected; a server still connecting is waited for (up to its connect timeout). */
export async function connectedServer(host: PluginHost, server: string): Promise<LiveServer> {
  const connection = host.server(server);
  if (!connection)
    throw new PiMcpError("not_found", safeText(`server "${server}" is not configured or not enabled in this session`, host.context.redact));
  await connection.connected();
  return connection;
}

function shortList(names: readonly string[], max = 20): string {
  return names.length <= max ? names.join(", ") : `${names.slice(0, max).join(", ")}, … ${names.length - max} more`;
}
