import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { registerPiMcp } from "./pi/extension.ts";

/** Pi extension entry: Pi loads this file from source. */
export default function piMcp(pi: ExtensionAPI): void {
  registerPiMcp(pi);
}
