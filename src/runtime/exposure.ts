import picomatch from "picomatch";
import type { EffectiveConfig, Exposure, ServerDefinition } from "../kernel/settings.ts";

/** A tool's exposure: the first `toolExposure` pattern that matches its MCP name, else the server's, else the top-level default. */
export function exposureOf(config: EffectiveConfig, definition: ServerDefinition | undefined, tool: string): Exposure {
  for (const [pattern, exposure] of Object.entries(definition?.toolExposure ?? {})) {
    if (picomatch.isMatch(tool, pattern, { dot: true })) return exposure;
  }
  return definition?.exposure ?? config.exposure;
}
