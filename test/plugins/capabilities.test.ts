/**
 * What the client declares to a server, with every internal plugin on and
 * every Pi service present (the most a session ever declares): roots,
 * sampling and elicitation, nothing else. pi-mcp supports no MCP Standard
 * Extensions and defers Tasks indefinitely, so neither `tasks` nor
 * `extensions` (nor an experimental capability) is ever declared, in either
 * protocol era.
 */
import { CLIENT_CAPABILITIES_META_KEY } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it } from "vitest";
import { internalPlugins } from "../../src/composition.ts";
import type { HostServices } from "../../src/kernel/services.ts";
import { fakeServices } from "../helpers/services.ts";
import { pluginHost, stopAllHosts } from "./harness.ts";

afterEach(stopAllHosts);

const EVERY_SERVICE: HostServices = {
  ...fakeServices(),
  model: { complete: () => Promise.reject(new Error("not asked")) },
  ui: {
    input: async () => undefined,
    select: async () => undefined,
    confirm: async () => false,
    notify: () => {},
  },
};

const DECLARED = {
  roots: { listChanged: true },
  sampling: { tools: {} },
  elicitation: { form: { applyDefaults: true }, url: {} },
};

describe.each(["legacy", "modern"] as const)("a %s-era server", (era) => {
  it("is declared roots, sampling and elicitation only: no tasks, no extensions", async () => {
    const h = await pluginHost(
      internalPlugins(),
      { peer: { era, options: { capabilities: { tools: {} } }, build() {} } },
      { services: EVERY_SERVICE },
    );
    await h.waitForState("peer", "connected");
    const declared = h.server("peer").received.flatMap((message) => {
      const params = "params" in message ? (message.params as Record<string, any> | undefined) : undefined;
      const found =
        "method" in message && message.method === "initialize" ? params?.capabilities : params?._meta?.[CLIENT_CAPABILITIES_META_KEY];
      return found === undefined ? [] : [found];
    });
    expect(declared.length).toBeGreaterThan(0);
    for (const capabilities of declared) {
      expect(capabilities).toEqual(DECLARED);
      expect(capabilities).not.toHaveProperty("tasks");
      expect(capabilities).not.toHaveProperty("extensions");
      expect(capabilities).not.toHaveProperty("experimental");
    }
  });
});
