// The images of a result, checked as it is finished (the real kernel and result pipeline, in
// process): what a provider takes goes to the model, within the room a message and the whole
// conversation have for images; everything else is saved in the session's folder and the model
// gets a line saying where and why.
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createKernel } from "../../src/composition.ts";
import {
  MAX_CONVERSATION_IMAGE_BYTES,
  MAX_CONVERSATION_IMAGES,
  MAX_IMAGE_FILES_PER_RESULT,
  MAX_IMAGES_PER_MESSAGE,
} from "../../src/kernel/limits.ts";
import type { ConversationImages, ImageService, PiContent, SessionServices } from "../../src/kernel/services.ts";
import { piImageService } from "../../src/pi/images.ts";
import type { HostContext } from "../../src/kernel/types.ts";
import { HostResults } from "../../src/runtime/results.ts";
import { inspectImage } from "../../src/safety/images.ts";
import { piTruncate } from "../helpers/host.ts";
import { GIF_1X1, JPEG_2X2, SVG, WEBP_1X1, largePng, png } from "../fixtures/images/encode.mjs";

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "pi-mcp-result-images-"));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");
const image = (bytes: Uint8Array, mimeType: string) => ({ type: "image", data: b64(bytes), mimeType });

/** A result pipeline whose conversation, when given, holds what `conversation()` says; with `images`, Pi's image resizing. */
function pipeline(conversation?: () => ConversationImages, images?: ImageService) {
  const session = conversation && ({ images: conversation } as unknown as SessionServices);
  const host = {
    truncate: piTruncate,
    redact: (text: string) => text,
    privateDir: root,
    services: { ...(session && { session }), ...(images && { images }) },
  } as unknown as HostContext;
  const results = new HostResults(createKernel(), () => host);
  return async (content: unknown[]) => {
    const origin = { server: "pics", operation: "shapes" };
    return (await results.finish(origin, await results.map(origin, { content }, {}))).content;
  };
}

const images = (content: PiContent[]) => content.filter((item) => item.type === "image");
const texts = (content: PiContent[]) => content.flatMap((item) => (item.type === "text" ? [item.text] : []));
/** Every saved-image line: [label, path, why]. */
const savedLines = (content: PiContent[]) =>
  texts(content).flatMap((text) =>
    [...text.matchAll(/\[image (\S+) saved(?: as received)? to (\S+): ([^\]]+)\]/g)].map((match) => match.slice(1)),
  );

describe("one result", () => {
  it("gives the model only whole PNG, JPEG, GIF and WebP images, with their true type, and saves every other with a line", async () => {
    const finish = pipeline();
    const content = await finish([
      { type: "text", text: "before" },
      image(SVG, "image/svg+xml"),
      { type: "image", data: "not base64 at all!", mimeType: "image/png" },
      image(JPEG_2X2, "image/png"),
      image(largePng(5 * 1024 * 1024), "image/png"),
      image(png(3000, 2), "image/png"),
      { type: "image", data: "", mimeType: "image/png" },
      image(GIF_1X1, "image/gif"),
      image(WEBP_1X1, "image/webp"),
      { type: "resource", resource: { uri: "file:///chart.png", mimeType: "image/png", blob: b64(png(2, 2)) } },
      { type: "resource", resource: { uri: "file:///logo.svg", mimeType: "image/svg+xml", blob: b64(SVG) } },
      { type: "text", text: "after" },
    ]);
    expect(images(content).map((item) => item.mimeType)).toEqual(["image/jpeg", "image/gif", "image/webp", "image/png"]);
    expect(images(content).map((item) => item.data)).toEqual([b64(JPEG_2X2), b64(GIF_1X1), b64(WEBP_1X1), b64(png(2, 2))]);
    const saved = savedLines(content);
    expect(saved.map(([label, , why]) => [label, why])).toEqual([
      ["image/svg+xml", "models take only PNG, JPEG, GIF or WebP images, not image/svg+xml"],
      ["image/png", "its data is not valid base64"],
      ["image/png", expect.stringMatching(/MiB of base64, more than the 4\.5 MiB a model takes per image$/)],
      ["image/png", "3000×2 pixels, more than the 2000×2000 a model takes in a conversation with many images"],
      ["image/svg+xml", "models take only PNG, JPEG, GIF or WebP images, not image/svg+xml"],
    ]);
    // Each file holds exactly what the server sent, privately, in the session's folder.
    const [svg, garbage, large, wide, logo] = saved.map(([, path]) => path!);
    expect(await readFile(svg!)).toEqual(SVG);
    expect(svg).toMatch(/\.svg$/);
    expect(await readFile(garbage!, "utf8")).toBe("not base64 at all!");
    expect((await readFile(large!)).equals(largePng(5 * 1024 * 1024))).toBe(true);
    expect((await readFile(wide!)).equals(png(3000, 2))).toBe(true);
    expect(await readFile(logo!)).toEqual(SVG);
    for (const path of saved.map(([, p]) => p!)) {
      expect(path.startsWith(join(root, "content"))).toBe(true);
      expect((await stat(path)).mode & 0o777).toBe(0o600);
    }
    const all = texts(content).join("\n");
    expect(all).toContain("before");
    expect(all).toContain("after");
    expect(all).toContain("[image without data]");
    expect(all).toContain("[resource file:///chart.png from pics, image/png]");
  });

  it(`gives the model at most ${MAX_IMAGES_PER_MESSAGE} of 1,000 images: ${MAX_IMAGE_FILES_PER_RESULT} more in files of their own, the rest in one file`, async () => {
    const pixels = Array.from({ length: 1000 }, (_, index) => png(1, 1, [index % 256, index >> 8, 7]));
    const content = await pipeline()(pixels.map((bytes) => image(bytes, "image/png")));
    expect(images(content).map((item) => item.data)).toEqual(pixels.slice(0, MAX_IMAGES_PER_MESSAGE).map(b64));
    const saved = savedLines(content);
    expect(saved).toHaveLength(MAX_IMAGE_FILES_PER_RESULT);
    for (const [index, [, path, why]] of saved.entries()) {
      expect(why).toBe(`the model already gets ${MAX_IMAGES_PER_MESSAGE} images in this message, the most one message may carry`);
      expect((await readFile(path!)).equals(pixels[MAX_IMAGES_PER_MESSAGE + index]!)).toBe(true);
    }
    const rest = 1000 - MAX_IMAGES_PER_MESSAGE - MAX_IMAGE_FILES_PER_RESULT;
    const bundle = new RegExp(
      `\\[${rest} more images not shown, saved together to (\\S+) \\(one JSON line each: mimeType, why, data\\)\\]`,
    ).exec(texts(content).join("\n"));
    expect(bundle, texts(content).join("\n").slice(-400)).not.toBeNull();
    const lines = (await readFile(bundle![1]!, "utf8"))
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines.map((line) => line.data)).toEqual(pixels.slice(MAX_IMAGES_PER_MESSAGE + MAX_IMAGE_FILES_PER_RESULT).map(b64));
    expect(lines.every((line) => line.mimeType === "image/png")).toBe(true);
    // Nothing else: the model's text is the lines, not a line per image past the files.
    expect(content).toHaveLength(MAX_IMAGES_PER_MESSAGE + MAX_IMAGE_FILES_PER_RESULT + 1);
  });
});

describe("the conversation's room", () => {
  const pixel = (index: number) => png(1, 1, [index, 9, 9]);

  it(`counts what the conversation holds: at most ${MAX_CONVERSATION_IMAGES} images in all`, async () => {
    const held = Array.from({ length: MAX_CONVERSATION_IMAGES - 3 }, (_, index) => b64(pixel(index)));
    const finish = pipeline(() => ({ data: held, sinceAssistant: 0, turn: "a1" }));
    const content = await finish(Array.from({ length: 5 }, (_, index) => image(pixel(200 + index), "image/png")));
    expect(images(content)).toHaveLength(3);
    expect(savedLines(content).map(([, , why]) => why)).toEqual([
      `the conversation already holds ${MAX_CONVERSATION_IMAGES} images, the most a model request may carry`,
      `the conversation already holds ${MAX_CONVERSATION_IMAGES} images, the most a model request may carry`,
    ]);
  });

  it(`counts the images after the last answer as one message (at most ${MAX_IMAGES_PER_MESSAGE}), and this turn's results not in the session yet`, async () => {
    let conversation: ConversationImages = { data: [b64(pixel(1)), b64(pixel(2))], sinceAssistant: 2, turn: "a1" };
    const finish = pipeline(() => conversation);
    // Parallel calls of one turn: Pi adds their results to the session together, after all of them.
    const first = await finish(Array.from({ length: 12 }, (_, index) => image(pixel(10 + index), "image/png")));
    expect(images(first)).toHaveLength(12);
    const second = await finish(Array.from({ length: 12 }, (_, index) => image(pixel(30 + index), "image/png")));
    expect(images(second)).toHaveLength(MAX_IMAGES_PER_MESSAGE - 2 - 12);
    // Once the session holds them, they are counted once, not twice.
    conversation = {
      data: [...conversation.data, ...images(first).map((item) => item.data), ...images(second).map((item) => item.data)],
      sinceAssistant: MAX_IMAGES_PER_MESSAGE,
      turn: "a1",
    };
    expect(images(await finish([image(pixel(60), "image/png")]))).toHaveLength(0);
    // The model answered: a new message begins; the conversation still holds its 20.
    conversation = { ...conversation, sinceAssistant: 0, turn: "a2" };
    expect(images(await finish(Array.from({ length: 25 }, (_, index) => image(pixel(70 + index), "image/png"))))).toHaveLength(
      MAX_IMAGES_PER_MESSAGE,
    );
  });

  it("forgets a result the session never took once the model has answered since", async () => {
    let conversation: ConversationImages = { data: [], sinceAssistant: 0, turn: "a1" };
    const finish = pipeline(() => conversation);
    expect(images(await finish(Array.from({ length: 20 }, (_, index) => image(pixel(index), "image/png"))))).toHaveLength(20);
    expect(images(await finish([image(pixel(99), "image/png")]))).toHaveLength(0);
    conversation = { data: [], sinceAssistant: 0, turn: "a2" }; // that turn was stopped: its results never reached the session
    expect(images(await finish([image(pixel(98), "image/png")]))).toHaveLength(1);
  });

  it(`keeps the conversation's images within ${MAX_CONVERSATION_IMAGE_BYTES / 1024 / 1024} MiB of base64`, async () => {
    const held = ["x".repeat(MAX_CONVERSATION_IMAGE_BYTES - 1000)];
    const finish = pipeline(() => ({ data: held, sinceAssistant: 0, turn: "a1" }));
    const small = png(1, 1);
    const content = await finish([image(png(40, 40), "image/png"), image(largePng(4000), "image/png"), image(small, "image/png")]);
    expect(images(content).map((item) => item.data)).toEqual([b64(png(40, 40)), b64(small)]);
    expect(savedLines(content).map(([, , why]) => why)).toEqual([
      "the conversation's images would pass 16 MiB of base64, the most a model request may carry",
    ]);
  });
});

it("every image that reaches the model is one a provider takes", async () => {
  const content = await pipeline()([image(png(2, 2), "image/jpg"), image(JPEG_2X2, "application/octet-stream"), image(SVG, "image/png")]);
  for (const item of images(content)) expect(inspectImage(item.data, item.mimeType)).toMatchObject({ ok: true, mimeType: item.mimeType });
  expect(images(content).map((item) => item.mimeType)).toEqual(["image/png", "image/jpeg"]);
  const [[, path, why]] = savedLines(content) as [[string, string, string]];
  expect(why).toBe("its bytes are not a whole PNG image (no image signature)");
  expect(existsSync(path)).toBe(true);
});

describe("an image that is only too large", () => {
  it("is made smaller by Pi's own resizing and shown, with its original size; one that is not whole is still saved", async () => {
    const content = await pipeline(
      undefined,
      piImageService,
    )([image(png(3000, 2), "image/png"), image(largePng(5 * 1024 * 1024), "image/png"), image(SVG, "image/svg+xml")]);
    const shown = images(content);
    expect(shown).toHaveLength(2);
    for (const item of shown) expect(inspectImage(item.data, item.mimeType)).toMatchObject({ ok: true, mimeType: item.mimeType });
    const [wide, large] = shown.map((item) => inspectImage(item.data, item.mimeType)) as { width: number; height: number }[];
    expect(wide!.width).toBe(2000);
    expect(large!.width).toBeLessThanOrEqual(2000);
    const notes = texts(content).filter((text) => text.startsWith("[image resized for the model: "));
    expect(notes[0]).toMatch(
      /^\[image resized for the model: image\/png, 3000×2 pixels, 1 KiB, shown at 2000×1; multiply coordinates by 1\.50 to map to the original\]$/,
    );
    expect(notes[1]).toMatch(/^\[image resized for the model: image\/png, (\d+)×\1 pixels, 5(\.\d)? MiB, shown at \d+×\d+; /);
    // In order: each image, then its note.
    expect(content.map((item) => item.type)).toEqual(["image", "text", "image", "text", "text"]);
    expect(savedLines(content).map(([label]) => label)).toEqual(["image/svg+xml"]);
  }, 60_000);
});
