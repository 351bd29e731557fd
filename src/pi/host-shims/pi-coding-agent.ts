// What the build imports from @earendil-works/pi-coding-agent: Pi's own values (src/pi/host-modules.ts).
// A name the extension imports and this file lacks fails the build.
import { piHostModules } from "../host-modules.ts";

export const { VERSION, DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, truncateHead, resizeImage } = piHostModules().agent;
