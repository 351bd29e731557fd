/**
 * The Pi extension entry Pi loads from this package (`"pi": {"extensions":
 * ["./index.ts"]}`). It sits at the package root so that Pi lists the
 * extension by the package's name (`pi-mcp`), as Pi labels a package whose
 * entry is `index.*` at its root; the extension itself is src/index.ts.
 *
 * Pi's loader transforms this file; the extension runs from the build
 * (dist/pi/entry.mjs), which Node loads as it is, with Pi's own modules
 * handed to it from here (src/pi/host-modules.ts). A checkout that was not
 * built, or `PI_MCP_CORE=source`, runs the sources through Pi's loader.
 */
import * as piCodingAgent from "@earendil-works/pi-coding-agent";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import * as piTui from "@earendil-works/pi-tui";
import { existsSync } from "node:fs";
import { providePiHostModules } from "./src/pi/host-modules.ts";

const BUILT_ENTRY = new URL("./dist/pi/entry.mjs", import.meta.url);

type Entry = typeof import("./src/index.ts");

/** Pi awaits an extension's factory: the entry is loaded and run before Pi goes on. */
export default async function piMcp(pi: ExtensionAPI): Promise<void> {
  const built = process.env.PI_MCP_CORE !== "source" && existsSync(BUILT_ENTRY);
  if (built) providePiHostModules({ agent: piCodingAgent, tui: piTui });
  const entry: Entry = built ? await import(BUILT_ENTRY.href) : await import("./src/index.ts");
  entry.default(pi);
}
