import { STAGE, type Kernel, type KernelPlugin } from "../../src/kernel/kernel.ts";
import type { ContentBlock, MappedResult, PiContent, ResultContext } from "../../src/kernel/types.ts";
import { MAX_NESTING_DEPTH } from "../../src/kernel/limits.ts";
import { CUT_MARKER, cutNesting, printJson } from "../../src/safety/json.ts";
import { normalImageType } from "../../src/safety/images.ts";

type Mapper = (block: ContentBlock, context: ResultContext) => Promise<PiContent[]> | PiContent[];

const text = (value: string): PiContent[] => [{ type: "text", text: value }];
const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

/**
 * The built-in mappers, one per MCP content type, each tapping that type's
 * `mapContent` hook at STAGE.BUILTIN: a third-party mapper that tapped the
 * same type earlier and answered has taken the block already.
 */
const MAPPERS: Readonly<Record<string, Mapper>> = {
  text: (block) => text(str(block.text) ?? ""),
  // Whether the model may take it (its bytes, size, how many) is decided for every image of the result as it is finished.
  image: (block) => {
    const data = str(block.data);
    return data ? [{ type: "image", data, mimeType: str(block.mimeType) ?? "" }] : text("[image without data]");
  },
  audio: async (block, context) => {
    const path = await context.saveFile(Buffer.from(str(block.data) ?? "", "base64"), { mimeType: str(block.mimeType), name: "audio" });
    return text(`[audio ${str(block.mimeType) ?? "unknown type"} saved to ${path}]`);
  },
  resource: async (block, context) => {
    const resource = (block.resource ?? {}) as Record<string, unknown>;
    const uri = str(resource.uri) ?? "(no uri)";
    const mimeType = str(resource.mimeType);
    if (typeof resource.text === "string") {
      return text(`[resource ${uri} from ${context.server}${mimeType ? `, ${mimeType}` : ""}]\n${resource.text}`);
    }
    const blob = str(resource.blob);
    // An image resource goes to the model as an image, when the model can take it (see above).
    if (blob && normalImageType(mimeType).startsWith("image/")) {
      return [...text(`[resource ${uri} from ${context.server}, ${mimeType}]`), { type: "image", data: blob, mimeType: mimeType ?? "" }];
    }
    const path = await context.saveFile(Buffer.from(blob ?? "", "base64"), { mimeType, name: "resource" });
    return text(`[binary resource ${uri} from ${context.server}${mimeType ? `, ${mimeType}` : ""} saved to ${path}]`);
  },
  resource_link: (block, context) => {
    const fields = [str(block.name), str(block.mimeType), str(block.description)].filter(Boolean).join(", ");
    return text(`[resource link from ${context.server}: ${str(block.uri) ?? "(no uri)"}${fields ? ` (${fields})` : ""}]`);
  },
};

export class ResultMappingPlugin implements KernelPlugin {
  readonly name = "result-mapping";
  apply(kernel: Kernel): void {
    for (const [type, mapper] of Object.entries(MAPPERS)) {
      kernel.hooks.mapContent
        .for(type)
        .tapPromise({ name: `${this.name}:${type}`, stage: STAGE.BUILTIN }, async (block, context) => mapper(block, context));
    }
    kernel.hooks.mapResult.tapPromise({ name: `${this.name}:structured`, stage: STAGE.BUILTIN }, async (result, context) =>
      withStructuredContent(result, context),
    );
    // A block of a type no mapper took (an unknown type, or one every mapper passed on) says so.
    kernel.hooks.mapResult.tapPromise({ name: `${this.name}:unknown`, stage: STAGE.FALLBACK }, async (result) => {
      for (const block of result.blocks) block.output ??= text(`[unsupported MCP content type "${block.source.type}"]`);
      return result;
    });
  }
}

/**
 * Structured content is shown to the model as labelled JSON and kept in
 * details (both go into Pi's transcript): cut below MAX_NESTING_DEPTH levels,
 * with a note saying so, and indented only when that at most doubles its size.
 */
function withStructuredContent(result: MappedResult, context: ResultContext): MappedResult {
  const structured = context.raw.structuredContent;
  if (structured === undefined) return result;
  const { value, cut } = cutNesting(structured);
  result.details.structuredContent = value;
  const note = cut
    ? `\n[structured content nested more than ${MAX_NESTING_DEPTH} levels deep: deeper values are replaced by "${CUT_MARKER}"]`
    : "";
  result.trailer.push({ type: "text", text: `[structured content]\n${printJson(value)}${note}` });
  return result;
}
