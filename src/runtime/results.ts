/*
 * The result pipeline: every MCP answer with content (tool results, resource
 * contents, prompt messages, the resource listings) is mapped block by block
 * by the mappers of its content type (`mapContent`), refined as a whole
 * (`mapResult`), then kept within Pi's limits with a Result Spill for what is
 * cut. Plugins reach it only through their host (`PluginHost.results`).
 */
import { describeError } from "../kernel/errors.ts";
import type { PluginKernel } from "../kernel/hooks.ts";
import type { ResultOrigin, ResultPipeline } from "../kernel/host.ts";
import type { ToolOutcome } from "../kernel/services.ts";
import type { ContentBlock, HostContext, MappedBlock, MappedResult, PiContent, ResultContext } from "../kernel/types.ts";
import { extensionFor, writePrivateFile } from "../config/private-files.ts";
import { cutNesting } from "../safety/json.ts";
import { ResultImages } from "./result-images.ts";
import { Turns } from "../kernel/async.ts";

/** Blocks mapped at once: a file-saving mapper (audio) overlaps its writes, and no more than these are in flight. */
const BLOCKS_IN_FLIGHT = 16;
/** How long mapping may hold the event loop before it lets Pi's input and other servers in. */
const TURN_MS = 20;

export class HostResults implements ResultPipeline {
  private readonly kernel: PluginKernel;
  private readonly host: () => HostContext;
  private readonly images = new ResultImages();

  // Fields written out (no parameter properties): Node's type stripping can load this file as it is.
  constructor(kernel: PluginKernel, host: () => HostContext) {
    this.kernel = kernel;
    this.host = host;
  }

  async map(origin: ResultOrigin, raw: Readonly<Record<string, unknown>>, details: Record<string, unknown>): Promise<MappedResult> {
    const host = this.host();
    const context: ResultContext = {
      host,
      server: origin.server,
      operation: origin.operation,
      raw,
      saveFile: (bytes, hint) =>
        writePrivateFile(host.privateDir, "content", `${hint.name ?? "content"}${extensionFor(hint.mimeType)}`, bytes),
    };
    const blocks = await this.mapBlocks(Array.isArray(raw.content) ? raw.content : [], context);
    return this.kernel.hooks.mapResult.promise({ blocks, trailer: [], details, isError: raw.isError === true }, context);
  }

  /**
   * Maps the blocks in order, BLOCKS_IN_FLIGHT at a time: a result of
   * hundreds of thousands of blocks holds only the mapped blocks, not a
   * pending mapping of each, and yields to the event loop every TURN_MS.
   */
  private async mapBlocks(sources: readonly unknown[], context: ResultContext): Promise<MappedBlock[]> {
    const blocks: MappedBlock[] = [];
    const turns = new Turns(TURN_MS);
    for (let start = 0; start < sources.length; start += BLOCKS_IN_FLIGHT) {
      const batch = sources.slice(start, start + BLOCKS_IN_FLIGHT).filter(isBlock);
      blocks.push(...(await Promise.all(batch.map((source) => this.mapBlock(source, context)))));
      if (turns.due()) await turns.pause();
    }
    return blocks;
  }

  /** One block through the mappers of its type; none answering leaves it unmapped (for `mapResult` to handle). */
  private async mapBlock(source: ContentBlock, context: ResultContext): Promise<MappedBlock> {
    const output = await this.kernel.hooks.mapContent.get(source.type)?.promise(source, context);
    return output === undefined ? { source } : { source, output };
  }

  async finish(origin: ResultOrigin, mapped: MappedResult): Promise<ToolOutcome> {
    await this.images.admit(this.host(), mapped);
    const content: PiContent[] = [];
    for (const block of mapped.blocks) if (block.output) for (const item of block.output) content.push(item);
    for (const item of mapped.trailer) content.push(item);
    return {
      content: await this.limitText(origin, content, mapped.details),
      details: withinNesting(mapped.details),
      isError: mapped.isError,
    };
  }

  /**
   * Keeps model-facing text within Pi's limits. When it is cut, the complete
   * text goes to a private Result Spill file whose path the model is given.
   */
  private async limitText(origin: ResultOrigin, content: PiContent[], details: Record<string, unknown>): Promise<PiContent[]> {
    const host = this.host();
    const { server, operation } = origin;
    const texts: string[] = [];
    for (const item of content) if (item.type === "text") texts.push(item.text);
    if (texts.length === 0) return content;
    const full = texts.length === 1 ? texts[0]! : texts.join("\n");
    texts.length = 0;
    const cut = host.truncate(full);
    if (!cut.truncated) return content;
    let spill: { path: string } | undefined;
    let unsaved: string | undefined;
    try {
      spill = await this.kernel.hooks.spill.promise({ host, server, operation, text: full });
    } catch (error) {
      // The spill folder cannot be written (full disk, permissions, ...): the model still gets the cut text, and is told why.
      unsaved = host.redact(describeError(error));
      details.spillError = unsaved;
    }
    if (spill) details.spillPath = spill.path;
    const note = spill
      ? `\n\n[output truncated to Pi's limit; the complete ${full.length}-character output is in ${spill.path}]`
      : unsaved !== undefined
        ? `\n\n[output truncated to Pi's limit; the complete ${full.length}-character output could not be saved: ${unsaved}]`
        : "\n\n[output truncated to Pi's limit]";
    const images = content.filter((item) => item.type === "image");
    return [{ type: "text", text: cut.text + note }, ...images];
  }
}

/**
 * Details go into Pi's transcript, which Pi structured-clones for every model
 * request: each value (a server's structured content, listed resources, what
 * a third-party mapper added) is cut at MAX_NESTING_DEPTH levels.
 */
function withinNesting(details: Record<string, unknown>): Record<string, unknown> {
  for (const [key, value] of Object.entries(details)) {
    const { value: kept, cut } = cutNesting(value);
    if (cut) details[key] = kept;
  }
  return details;
}

function isBlock(value: unknown): value is ContentBlock {
  return typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string";
}
