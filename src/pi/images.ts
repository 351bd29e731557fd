import { resizeImage } from "@earendil-works/pi-coding-agent";
import type { ImageService } from "../kernel/services.ts";

/**
 * Images made smaller as Pi makes the images it adds itself (its `read`
 * tool, attachments): Pi's resizeImage, in a worker thread, to the given
 * size and base64 bytes (smaller dimensions, PNG or JPEG, lower quality).
 */
export const piImageService: ImageService = {
  async fit(bytes, mimeType, limits) {
    const resized = await resizeImage(bytes, mimeType, { ...limits }).catch(() => null);
    if (!resized) return undefined;
    const { data, width, height, originalWidth, originalHeight } = resized;
    return { data, mimeType: resized.mimeType, width, height, originalWidth, originalHeight };
  },
};
