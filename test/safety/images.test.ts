// Which images a model provider takes: the type read from the bytes (never the label), whole
// images only, base64 that is base64, within Pi's size limits.
import { describe, expect, it } from "vitest";
import { MAX_IMAGE_BASE64_BYTES, MAX_IMAGE_SIDE } from "../../src/kernel/limits.ts";
import { decodeBase64, inspectImage, readImage } from "../../src/safety/images.ts";
import { GIF_1X1, JPEG_2X2, SVG, WEBP_1X1, largePng, png } from "../fixtures/images/encode.mjs";

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");
const why = (data: string, label?: string) => {
  const verdict = inspectImage(data, label);
  return verdict.ok ? "accepted" : verdict.why;
};

describe("inspectImage", () => {
  it.each([
    ["a PNG", png(3, 2), "image/png", "image/png", 3, 2],
    ["a JPEG", JPEG_2X2, "image/jpeg", "image/jpeg", 2, 2],
    ["a GIF", GIF_1X1, "image/gif", "image/gif", 1, 1],
    ["a WebP", WEBP_1X1, "image/webp", "image/webp", 1, 1],
    ["a JPEG labelled PNG", JPEG_2X2, "image/png", "image/jpeg", 2, 2],
    ["a PNG labelled application/octet-stream", png(), "application/octet-stream", "image/png", 1, 1],
    ["a PNG labelled IMAGE/PNG; charset=binary", png(), "IMAGE/PNG; charset=binary", "image/png", 1, 1],
    ["a PNG without a label", png(), undefined, "image/png", 1, 1],
    ["a PNG sent as a base64 data URL", png(), "image/png", "image/png", 1, 1, "data:image/png;base64,"],
    ["a JPEG sent as a data URL labelled PNG", JPEG_2X2, "image/png", "image/jpeg", 2, 2, "DATA:image/png;charset=binary;base64,"],
    [
      `a ${MAX_IMAGE_SIDE} × ${MAX_IMAGE_SIDE} PNG`,
      png(MAX_IMAGE_SIDE, MAX_IMAGE_SIDE),
      "image/png",
      "image/png",
      MAX_IMAGE_SIDE,
      MAX_IMAGE_SIDE,
    ],
  ])("takes %s as what its bytes are", (_, bytes, label, type, width, height, prefix = "") => {
    expect(inspectImage(prefix + b64(bytes), label)).toMatchObject({ ok: true, data: b64(bytes), mimeType: type, width, height });
  });

  it("refuses what a provider refuses, saying why, and keeps the bytes to save", () => {
    const whole = png(4, 4);
    const damaged = Buffer.from(whole);
    const inData = whole.length - 20; // inside IDAT: its checksum no longer matches
    damaged.writeUInt8(damaged.readUInt8(inData) ^ 0xff, inData);
    expect(why(b64(SVG), "image/svg+xml")).toBe("models take only PNG, JPEG, GIF or WebP images, not image/svg+xml");
    expect(why(b64(Buffer.from("GIF8 not really")), "image/gif")).toBe("its bytes are not a whole GIF image (no image signature)");
    expect(why("this is not base64!", "image/png")).toBe("its data is not valid base64");
    expect(why(`data:image/png,${b64(png())}`, "image/png")).toBe("its data is not valid base64"); // a data URL, but not of base64
    expect(why("iVBORw0KGgo=", "image/png")).toBe("its bytes are not a whole PNG image (it is cut off before its end)");
    expect(why(b64(whole.subarray(0, whole.length - 5)), "image/png")).toBe(
      "its bytes are not a whole PNG image (it is cut off before its end)",
    );
    expect(why(b64(whole.subarray(0, 50)), "image/png")).toBe("its bytes are not a whole PNG image (the IDAT chunk is cut off)");
    expect(why(b64(damaged), "image/png")).toBe("its bytes are not a whole PNG image (the IDAT chunk is damaged)");
    expect(why(b64(Buffer.concat([whole, Buffer.from("trailing")])), "image/png")).toBe(
      "its bytes are not a whole PNG image (bytes follow its end)",
    );
    expect(why(b64(JPEG_2X2.subarray(0, JPEG_2X2.length - 2)), "image/jpeg")).toBe(
      "its bytes are not a whole JPEG image (it is cut off before its end)",
    );
    expect(why(b64(GIF_1X1.subarray(0, GIF_1X1.length - 1)), "image/gif")).toBe(
      "its bytes are not a whole GIF image (it is cut off before its end)",
    );
    expect(why(b64(WEBP_1X1.subarray(0, 30)), "image/webp")).toBe("its bytes are not a whole WebP image (its RIFF container is not whole)");
    expect(why(b64(png(MAX_IMAGE_SIDE + 1, 2)), "image/png")).toBe(
      `${MAX_IMAGE_SIDE + 1}×2 pixels, more than the 2000×2000 a model takes in a conversation with many images`,
    );
    const large = b64(largePng(MAX_IMAGE_BASE64_BYTES));
    expect(large.length).toBeGreaterThan(MAX_IMAGE_BASE64_BYTES);
    expect(why(large, "image/png")).toMatch(/^\d+(\.\d)? MiB of base64, more than the 4\.5 MiB a model takes per image$/);
    const refused = inspectImage(b64(SVG), "image/svg+xml");
    expect(refused.ok === false && Buffer.from(refused.bytes).equals(SVG)).toBe(true);
    const garbage = inspectImage("this is not base64!", "image/png");
    expect(garbage.ok === false && garbage.asReceived && Buffer.from(garbage.bytes).toString()).toBe("this is not base64!");
  });

  it("takes the PNG of a real server whose ancillary chunk has a wrong checksum, as decoders do", () => {
    // server-everything's image: its iCCP chunk's checksum is wrong; libpng drops such a chunk and shows the image.
    const bytes = png(2, 2);
    const withText = Buffer.concat([bytes.subarray(0, 33), chunkWithWrongChecksum("tEXt", "Comment\u0000x"), bytes.subarray(33)]);
    expect(inspectImage(b64(withText), "image/png")).toMatchObject({ ok: true, width: 2, height: 2 });
  });
});

function chunkWithWrongChecksum(type: string, text: string): Buffer {
  const data = Buffer.from(text, "latin1");
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, "latin1");
  data.copy(out, 8);
  out.writeUInt32BE(0xdeadbeef, 8 + data.length);
  return out;
}

describe("decodeBase64", () => {
  it("gives canonical base64: line breaks out, padding in, the same string when it already is", () => {
    const data = b64(png(5, 5));
    expect(decodeBase64(data)?.canonical).toBe(data);
    const broken = data.replace(/(.{20})/g, "$1\r\n");
    expect(decodeBase64(broken)?.canonical).toBe(data);
    expect(decodeBase64(data.replace(/=+$/, ""))?.canonical).toBe(data);
    expect(decodeBase64("abc")?.canonical).toBe("abc=");
  });

  it("refuses what is not base64", () => {
    for (const data of ["a", "ab*d", "ab=c", "====", "data:image/png;base64,iVBORw0KGgo="])
      expect(decodeBase64(data), data).toBeUndefined();
  });
});

it("readImage reads no type from bytes that have none", () => {
  expect(readImage(new Uint8Array())).toEqual({ problem: "no bytes" });
  expect(readImage(SVG)).toEqual({ problem: "no image signature" });
});
