// What the build imports from @earendil-works/pi-tui: Pi's own values (src/pi/host-modules.ts).
// A name the extension imports and this file lacks fails the build.
import { piHostModules } from "../host-modules.ts";

export const { Box, truncateToWidth, wrapTextWithAnsi } = piHostModules().tui;
