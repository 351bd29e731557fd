/*
 * The images of a result, checked before they reach Pi's transcript. Every
 * model request carries the whole conversation: one image a provider refuses
 * (see src/safety/images.ts), or one image too many, fails that request and
 * every later one of the session, also after it is resumed. So an image goes
 * to the model only when a provider takes it and there is room for it:
 *
 * - per message: at most MAX_IMAGES_PER_MESSAGE, counting the images of the
 *   tool results of the same turn (providers send them in one message);
 * - per conversation: at most MAX_CONVERSATION_IMAGES images and
 *   MAX_CONVERSATION_IMAGE_BYTES of them in what the next request carries
 *   (Pi's compacted context), counting results of this turn that are not in
 *   the session yet (Pi adds parallel tool results together at the end).
 *
 * An image that is only too large (bytes or pixels) is first made smaller
 * the way Pi makes its own images smaller (HostServices.images), and the
 * model is told the original size. Every other image is saved in the
 * session's private folder, and the model
 * gets a line that says where and why; past MAX_IMAGE_FILES_PER_RESULT files,
 * the rest are saved together in one file.
 */
import { describeError } from "../kernel/errors.ts";
import {
  MAX_CONVERSATION_IMAGE_BYTES,
  MAX_CONVERSATION_IMAGES,
  MAX_IMAGE_BASE64_BYTES,
  MAX_IMAGE_FILES_PER_RESULT,
  MAX_IMAGE_SIDE,
  MAX_IMAGES_PER_MESSAGE,
} from "../kernel/limits.ts";
import type { ConversationImages, ImageLimits, ImageService } from "../kernel/services.ts";
import type { HostContext, MappedResult, PiContent } from "../kernel/types.ts";
import { extensionFor, writePrivateFile } from "../config/private-files.ts";
import { formatMiB, type ImageVerdict, imageLabel, inspectImage } from "../safety/images.ts";

type PiImage = Extract<PiContent, { type: "image" }>;

/** Where an image sits in a mapped result: a block's output or the trailer. */
interface Place {
  readonly list: PiContent[];
  readonly index: number;
  readonly image: PiImage;
}

/** An image that does not go to the model: what is saved instead, and why. */
interface Refused {
  readonly place: Place;
  readonly why: string;
  readonly bytes: Uint8Array;
  readonly mimeType: string;
  readonly asReceived?: true;
}

/** How many more images, and bytes of them, the model can take now; and why not, once there is no room. */
interface Room {
  count: number;
  bytes: number;
  readonly countWhy: string;
  readonly bytesWhy: string;
  readonly turn: string | undefined;
}

/** What an image that is too large is made to fit: the limits every image the model gets is held to. */
const FIT: ImageLimits = { maxWidth: MAX_IMAGE_SIDE, maxHeight: MAX_IMAGE_SIDE, maxBytes: MAX_IMAGE_BASE64_BYTES };

const BYTES_WHY = `the conversation's images would pass ${formatMiB(MAX_CONVERSATION_IMAGE_BYTES)} of base64, the most a model request may carry`;

export class ResultImages {
  /** Images given to the model in this turn's results that the session does not hold yet (Pi adds parallel results at the end). */
  private pending: { readonly data: string; readonly turn: string | undefined }[] = [];

  /**
   * Checks every image of `mapped` in place: an image the model can take
   * stays (as canonical base64, with its true type); one that is only too
   * large is made smaller by Pi's own resizing, when the host has it, with a
   * line giving the original size; any other becomes a labelled line naming
   * the file it was saved to.
   */
  async admit(host: HostContext, mapped: MappedResult): Promise<void> {
    const places = imagePlaces(mapped);
    if (places.length === 0) return;
    const room = this.room(host.services.session?.images?.());
    const replaced = new Map<Place, PiContent[]>();
    const refused: Refused[] = [];
    for (const place of places) {
      const received = inspectImage(place.image.data, place.image.mimeType);
      if (!received.ok && !received.tooLarge) {
        refused.push({ place, ...received });
        continue;
      }
      const saved = { bytes: received.bytes, mimeType: received.mimeType };
      if (room.count <= 0) {
        refused.push({ place, why: room.countWhy, ...saved });
        continue;
      }
      const shown = received.ok ? { verdict: received } : await smaller(host.services.images, received);
      if (!shown.verdict.ok) {
        refused.push({ place, why: shown.verdict.why, ...saved });
        continue;
      }
      const { data, mimeType } = shown.verdict;
      if (data.length > room.bytes) {
        refused.push({ place, why: room.bytesWhy, ...saved });
        continue;
      }
      replaced.set(place, [{ type: "image", data, mimeType }, ...(shown.note ? [{ type: "text" as const, text: shown.note }] : [])]);
      room.count--;
      room.bytes -= data.length;
      this.pending.push({ data, turn: room.turn });
    }
    if (refused.length > 0) for (const [place, line] of await saveRefused(host, refused)) replaced.set(place, line);
    // Replaced from the end of each list, so that the places still to replace keep their index.
    for (const place of [...replaced.keys()].sort((a, b) => b.index - a.index)) place.list.splice(place.index, 1, ...replaced.get(place)!);
  }

  private room(conversation: ConversationImages | undefined): Room {
    const message = `the model already gets ${MAX_IMAGES_PER_MESSAGE} images in this message, the most one message may carry`;
    if (!conversation)
      return {
        count: MAX_IMAGES_PER_MESSAGE,
        bytes: MAX_CONVERSATION_IMAGE_BYTES,
        countWhy: message,
        bytesWhy: BYTES_WHY,
        turn: undefined,
      };
    // A pending image is in the session now, or will never be once the model has answered since.
    this.pending = this.pending.filter((image) => image.turn === conversation.turn && !conversation.data.includes(image.data));
    const held = conversation.data.length + this.pending.length;
    const heldBytes = [...conversation.data, ...this.pending.map((image) => image.data)].reduce((sum, data) => sum + data.length, 0);
    const inMessage = MAX_IMAGES_PER_MESSAGE - conversation.sinceAssistant - this.pending.length;
    const inConversation = MAX_CONVERSATION_IMAGES - held;
    return {
      count: Math.min(inMessage, inConversation),
      bytes: MAX_CONVERSATION_IMAGE_BYTES - heldBytes,
      countWhy:
        inConversation <= inMessage
          ? `the conversation already holds ${MAX_CONVERSATION_IMAGES} images, the most a model request may carry`
          : message,
      bytesWhy: BYTES_WHY,
      turn: conversation.turn,
    };
  }
}

/** Every image item of the result, in the order the model would see them. */
function imagePlaces(mapped: MappedResult): Place[] {
  const places: Place[] = [];
  const scan = (list: PiContent[] | undefined) =>
    list?.forEach((item, index) => {
      if (item.type === "image") places.push({ list, index, image: item });
    });
  for (const block of mapped.blocks) scan(block.output);
  scan(mapped.trailer);
  return places;
}

/**
 * Saves the refused images (each in a file of its own, the ones past
 * MAX_IMAGE_FILES_PER_RESULT together in one) and puts a line in the place of
 * each: where it is, and why the model did not get it.
 */
async function saveRefused(host: HostContext, refused: readonly Refused[]): Promise<Map<Place, PiContent[]>> {
  const own = refused.slice(0, MAX_IMAGE_FILES_PER_RESULT);
  const together = refused.slice(MAX_IMAGE_FILES_PER_RESULT);
  const lines = new Map<Place, string | undefined>();
  await Promise.all(
    own.map(async (image) => {
      const label = `image ${imageLabel(image.place.image.mimeType)}`;
      const name = image.asReceived ? "image-data.txt" : `image${extensionFor(image.mimeType)}`;
      lines.set(
        image.place,
        await saved(
          () => writePrivateFile(host.privateDir, "content", name, image.bytes),
          (path) => `[${label} saved${image.asReceived ? " as received" : ""} to ${path}: ${image.why}]`,
          (error) => `[${label} not shown (${image.why}); it could not be saved: ${host.redact(error)}]`,
        ),
      );
    }),
  );
  if (together.length > 0) {
    const what = `${together.length} more image${together.length === 1 ? "" : "s"}`;
    const jsonLines = together.map(
      (image) => `${JSON.stringify({ mimeType: image.place.image.mimeType, why: image.why, data: image.place.image.data })}\n`,
    );
    lines.set(
      together[0]!.place,
      await saved(
        () => writePrivateFile(host.privateDir, "content", "images.jsonl", Buffer.from(jsonLines.join(""), "utf8")),
        (path) => `[${what} not shown, saved together to ${path} (one JSON line each: mimeType, why, data)]`,
        (error) => `[${what} not shown; they could not be saved: ${host.redact(error)}]`,
      ),
    );
    for (const image of together.slice(1)) lines.set(image.place, undefined);
  }
  return new Map([...lines].map(([place, line]) => [place, line === undefined ? [] : [{ type: "text", text: line }]]));
}

/**
 * A whole image that is only too large, made smaller (Pi's own resizing) and
 * checked again; with a line for the model saying what it was. Without the
 * service, or when it cannot be made small enough, the refusal stands.
 */
async function smaller(
  images: ImageService | undefined,
  received: Extract<ImageVerdict, { ok: false }>,
): Promise<{ verdict: ImageVerdict; note?: string }> {
  const fitted = await images?.fit(received.bytes, received.mimeType, FIT);
  const verdict = fitted && inspectImage(fitted.data, fitted.mimeType);
  if (!fitted || !verdict?.ok) return { verdict: received };
  const scale = (fitted.originalWidth / fitted.width).toFixed(2);
  return {
    verdict,
    note: `[image resized for the model: ${received.mimeType}, ${fitted.originalWidth}×${fitted.originalHeight} pixels, ${sizeOf(received.bytes.length)}, shown at ${fitted.width}×${fitted.height}; multiply coordinates by ${scale} to map to the original]`,
  };
}

const sizeOf = (bytes: number) => (bytes < 1024 * 1024 ? `${Math.ceil(bytes / 1024)} KiB` : formatMiB(bytes));

async function saved(write: () => Promise<string>, done: (path: string) => string, failed: (error: string) => string): Promise<string> {
  try {
    return done(await write());
  } catch (error) {
    return failed(describeError(error));
  }
}
