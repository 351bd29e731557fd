import picomatch from "picomatch";
import type { EffectiveConfig, ExposureSetting, ServerDefinition } from "../kernel/settings.ts";

/** A tool's exposure: the first `toolExposure` pattern that matches its MCP name, else the server's, else the top-level default (`auto`: the context budget decides, src/runtime/context-budget.ts). */
export function exposureOf(config: EffectiveConfig, definition: ServerDefinition | undefined, tool: string): ExposureSetting {
  const patterns = definition?.toolExposure;
  if (patterns) for (const [matches, exposure] of matchersOf(patterns)) if (matches(tool)) return exposure;
  return definition?.exposure ?? config.exposure;
}

type ToolExposure = NonNullable<ServerDefinition["toolExposure"]>;

/** Each `toolExposure` pattern compiled once per settings object (a catalog of thousands of tools asks for every tool). */
const matchers = new WeakMap<ToolExposure, readonly (readonly [(tool: string) => boolean, ExposureSetting])[]>();

function matchersOf(patterns: ToolExposure) {
  let compiled = matchers.get(patterns);
  if (!compiled) {
    compiled = Object.entries(patterns).map(([pattern, exposure]) => [picomatch(pattern, { dot: true }), exposure] as const);
    matchers.set(patterns, compiled);
  }
  return compiled;
}
