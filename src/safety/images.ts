/*
 * Whether an image a server sent is one a model provider takes: an image
 * the providers Pi talks to refuse (another type, data that is not base64,
 * bytes that are not the image they claim, too large) fails the request it is
 * in, and every later one of the same conversation. The type is read from the
 * bytes, never taken from the label; the size from the image's own header.
 */
import { crc32 } from "node:zlib";
import { MAX_IMAGE_BASE64_BYTES, MAX_IMAGE_SIDE } from "../kernel/limits.ts";
import { stripTerminalControls } from "./text.ts";

/** The image types every provider Pi talks to takes. */
export const MODEL_IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"] as const;
export type ModelImageType = (typeof MODEL_IMAGE_TYPES)[number];

const TYPE_NAMES: Readonly<Record<ModelImageType, string>> = {
  "image/png": "PNG",
  "image/jpeg": "JPEG",
  "image/gif": "GIF",
  "image/webp": "WebP",
};
const TYPES_IN_WORDS = "PNG, JPEG, GIF or WebP";

/** What the bytes of an image are, read from their own structure. */
export interface ImageFacts {
  readonly type: ModelImageType;
  readonly width: number;
  readonly height: number;
}

/** An image a model takes as it is (`data` is canonical base64), or why not with the bytes to keep instead. */
export type ImageVerdict =
  | {
      readonly ok: true;
      readonly data: string;
      readonly bytes: Uint8Array;
      readonly mimeType: ModelImageType;
      readonly width: number;
      readonly height: number;
    }
  | {
      readonly ok: false;
      readonly why: string;
      readonly bytes: Uint8Array;
      readonly mimeType: string;
      readonly asReceived?: true;
      /** A whole image of a type models take, only too large (made smaller, a model would take it). */
      readonly tooLarge?: true;
    };

/** `image/PNG; charset=x` → `image/png`; `image/jpg` → `image/jpeg`. */
export function normalImageType(mimeType: string | undefined): string {
  const base = (mimeType ?? "").split(";")[0]!.trim().toLowerCase();
  return base === "image/jpg" ? "image/jpeg" : base;
}

/**
 * The verdict on one image: a model takes it when its data is base64 of a
 * whole PNG, JPEG, GIF or WebP image (whatever type it was labelled with: a
 * mislabelled one goes on with its true type) of at most MAX_IMAGE_BASE64_BYTES
 * and MAX_IMAGE_SIDE pixels a side. Data sent as a base64 data URL
 * (`data:image/png;base64,...`, as some servers do) is read as its base64.
 */
export function inspectImage(data: string, declared: string | undefined): ImageVerdict {
  const label = normalImageType(declared);
  const decoded = decodeBase64(withoutDataUrl(data));
  if (!decoded)
    return { ok: false, why: "its data is not valid base64", bytes: Buffer.from(data, "utf8"), mimeType: "text/plain", asReceived: true };
  const { bytes, canonical } = decoded;
  const facts = readImage(bytes);
  if ("problem" in facts) {
    const why = isModelImageType(label)
      ? `its bytes are not a whole ${TYPE_NAMES[label]} image (${facts.problem})`
      : `models take only ${TYPES_IN_WORDS} images${label.startsWith("image/") ? `, not ${label}` : ""}`;
    return { ok: false, why, bytes, mimeType: label };
  }
  if (canonical.length > MAX_IMAGE_BASE64_BYTES) {
    const why = `${formatMiB(canonical.length)} of base64, more than the ${formatMiB(MAX_IMAGE_BASE64_BYTES)} a model takes per image`;
    return { ok: false, why, bytes, mimeType: facts.type, tooLarge: true };
  }
  if (facts.width > MAX_IMAGE_SIDE || facts.height > MAX_IMAGE_SIDE) {
    const why = `${facts.width}×${facts.height} pixels, more than the ${MAX_IMAGE_SIDE}×${MAX_IMAGE_SIDE} a model takes in a conversation with many images`;
    return { ok: false, why, bytes, mimeType: facts.type, tooLarge: true };
  }
  return { ok: true, data: canonical, bytes, mimeType: facts.type, width: facts.width, height: facts.height };
}

/** A server's label for an image, fit for a line the model reads: one line, at most 100 characters. */
export function imageLabel(mimeType: string | undefined): string {
  const label = stripTerminalControls(normalImageType(mimeType)).replace(/\s+/g, " ").slice(0, 100);
  return label === "" ? "(no type)" : label;
}

export function isModelImageType(type: string): type is ModelImageType {
  return (MODEL_IMAGE_TYPES as readonly string[]).includes(type);
}

/** `5.2 MiB` */
export function formatMiB(bytes: number): string {
  return `${Number((bytes / (1024 * 1024)).toFixed(1))} MiB`;
}

const DATA_URL = /^data:[^,]{0,200};base64,/i;

/** The base64 of a base64 data URL; any other data as it is. */
function withoutDataUrl(data: string): string {
  const prefix = DATA_URL.exec(data.slice(0, 256));
  return prefix ? data.slice(prefix[0].length) : data;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * The bytes base64 `data` holds, and its canonical form (line breaks taken
 * out, padding as it should be): undefined when it is not base64 at all.
 * Data that is already canonical is returned as it is (no copy).
 */
export function decodeBase64(data: string): { bytes: Buffer; canonical: string } | undefined {
  const compact = /\s/.test(data) ? data.replace(/\s+/g, "") : data;
  if (!BASE64.test(compact) || compact.length % 4 === 1) return undefined;
  const bytes = Buffer.from(compact, "base64");
  const encoded = bytes.toString("base64");
  return { bytes, canonical: encoded === data ? data : encoded };
}

/** The type and size of a whole PNG, JPEG, GIF or WebP image, read from its bytes; or what is wrong with them. */
export function readImage(bytes: Uint8Array): ImageFacts | { problem: string } {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.length === 0) return { problem: "no bytes" };
  if (startsWith(view, PNG_SIGNATURE)) return readPng(view);
  if (view.length >= 3 && view[0] === 0xff && view[1] === 0xd8 && view[2] === 0xff) return readJpeg(view);
  if (view.length >= 6 && (view.toString("latin1", 0, 6) === "GIF87a" || view.toString("latin1", 0, 6) === "GIF89a")) return readGif(view);
  if (view.length >= 12 && view.toString("latin1", 0, 4) === "RIFF" && view.toString("latin1", 8, 12) === "WEBP") return readWebp(view);
  return { problem: "no image signature" };
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function startsWith(bytes: Buffer, prefix: Buffer): boolean {
  return bytes.length >= prefix.length && bytes.subarray(0, prefix.length).equals(prefix);
}

function sized(type: ModelImageType, width: number, height: number): ImageFacts | { problem: string } {
  return width > 0 && height > 0 ? { type, width, height } : { problem: "no width or height" };
}

/**
 * Every chunk whole, IHDR first, image data, IEND last, and the checksum of
 * every critical chunk right (decoders drop an ancillary chunk with a wrong
 * one, as libpng does, and so do real servers' images: server-everything's).
 */
function readPng(bytes: Buffer): ImageFacts | { problem: string } {
  let at = PNG_SIGNATURE.length;
  let header: { width: number; height: number } | undefined;
  let data = false;
  while (at + 12 <= bytes.length) {
    const length = bytes.readUInt32BE(at);
    const type = bytes.toString("latin1", at + 4, at + 8);
    const end = at + 12 + length;
    if (length > 0x7fffffff || end > bytes.length) return { problem: `the ${type} chunk is cut off` };
    const critical = (bytes[at + 4]! & 0x20) === 0;
    if (critical && crc32(bytes.subarray(at + 4, at + 8 + length)) !== bytes.readUInt32BE(at + 8 + length))
      return { problem: `the ${type} chunk is damaged` };
    if (!header) {
      if (type !== "IHDR" || length !== 13) return { problem: "it does not start with its header" };
      header = { width: bytes.readUInt32BE(at + 8), height: bytes.readUInt32BE(at + 12) };
    } else if (type === "IDAT") data = true;
    else if (type === "IEND") {
      if (!data) return { problem: "it holds no image data" };
      if (end !== bytes.length) return { problem: "bytes follow its end" };
      return sized("image/png", header.width, header.height);
    }
    at = end;
  }
  return { problem: "it is cut off before its end" };
}

/** Segments up to the scan, a frame header among them, and the end-of-image marker last. */
function readJpeg(bytes: Buffer): ImageFacts | { problem: string } {
  let at = 2;
  let frame: { width: number; height: number } | undefined;
  while (at + 4 <= bytes.length) {
    if (bytes[at] !== 0xff) return { problem: "a segment is damaged" };
    const marker = bytes[at + 1]!;
    if (marker === 0xff) {
      at += 1; // fill byte
      continue;
    }
    const length = bytes.readUInt16BE(at + 2);
    if (length < 2 || at + 2 + length > bytes.length) return { problem: "a segment is cut off" };
    // Start-of-frame markers (not DHT C4, JPG C8 or DAC CC): precision, height, width.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      if (length < 7) return { problem: "its frame header is cut off" };
      frame = { height: bytes.readUInt16BE(at + 5), width: bytes.readUInt16BE(at + 7) };
    }
    if (marker === 0xda) {
      if (!frame) return { problem: "it has no frame header" };
      const end = bytes.length;
      if (end < at + 4 || bytes[end - 2] !== 0xff || bytes[end - 1] !== 0xd9) return { problem: "it is cut off before its end" };
      return sized("image/jpeg", frame.width, frame.height);
    }
    at += 2 + length;
  }
  return { problem: "it is cut off before its image data" };
}

/** The logical screen's size, and the trailer last. */
function readGif(bytes: Buffer): ImageFacts | { problem: string } {
  if (bytes.length < 14) return { problem: "it is cut off" };
  if (bytes[bytes.length - 1] !== 0x3b) return { problem: "it is cut off before its end" };
  return sized("image/gif", bytes.readUInt16LE(6), bytes.readUInt16LE(8));
}

/** The RIFF container whole, and the size from its first chunk (VP8, VP8L or VP8X). */
function readWebp(bytes: Buffer): ImageFacts | { problem: string } {
  const riffEnd = 8 + bytes.readUInt32LE(4);
  // A RIFF chunk of odd size is padded to an even one.
  if (riffEnd > bytes.length || bytes.length > riffEnd + (riffEnd % 2)) return { problem: "its RIFF container is not whole" };
  if (bytes.length < 30) return { problem: "it is cut off" };
  const chunk = bytes.toString("latin1", 12, 16);
  if (chunk === "VP8 ") {
    if (bytes[23] !== 0x9d || bytes[24] !== 0x01 || bytes[25] !== 0x2a) return { problem: "its VP8 frame is damaged" };
    return sized("image/webp", bytes.readUInt16LE(26) & 0x3fff, bytes.readUInt16LE(28) & 0x3fff);
  }
  if (chunk === "VP8L") {
    if (bytes[20] !== 0x2f) return { problem: "its VP8L stream is damaged" };
    const bits = bytes.readUInt32LE(21);
    return sized("image/webp", (bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1);
  }
  if (chunk === "VP8X") return sized("image/webp", bytes.readUIntLE(24, 3) + 1, bytes.readUIntLE(27, 3) + 1);
  return { problem: `its first chunk (${JSON.stringify(chunk)}) is not an image` };
}
