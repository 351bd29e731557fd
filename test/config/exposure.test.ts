import { expect, it } from "vitest";
import { resolveConfig } from "../../src/config/resolve.ts";
import { exposureOf } from "../../src/runtime/exposure.ts";

const sources = { globalPath: "/g/settings.json", projectPath: "/p/.pi/settings.json", projectTrusted: true };
const load = (global: unknown, project?: unknown) =>
  resolveConfig({ scope: "global", file: "/g/settings.json", mcp: global }, project === undefined ? undefined : { scope: "project", file: "/p/.pi/settings.json", mcp: project }, {}, sources);

it("defaults every tool to direct exposure", () => {
  const config = load({ servers: { s: { command: "node" } } });
  expect(config.exposure).toBe("direct");
  expect(exposureOf(config, config.servers[0]!.definition, "anything")).toBe("direct");
});

it("takes the tool pattern first, then the server, then the top level (project over global)", () => {
  const config = load({ exposure: "codemode", servers: { s: { command: "node", exposure: "deferred", toolExposure: { "delete_*": "hidden", echo: "direct" } }, t: { command: "node" } } }, { exposure: "deferred" });
  const [s, t] = config.servers;
  expect(config.valid).toBe(true);
  expect(exposureOf(config, s!.definition, "delete_all")).toBe("hidden");
  expect(exposureOf(config, s!.definition, "echo")).toBe("direct");
  expect(exposureOf(config, s!.definition, "other")).toBe("deferred");
  expect(exposureOf(config, t!.definition, "other")).toBe("deferred");
});

it("rejects an unknown exposure with its path, at every level", () => {
  const config = load({ exposure: "lazy", servers: { s: { command: "node", exposure: "sometimes", toolExposure: { echo: "never" } } } });
  expect(config.valid).toBe(false);
  expect(config.issues.map((issue) => issue.path).sort()).toEqual(["mcp.exposure", "mcp.servers.s.exposure", "mcp.servers.s.toolExposure.echo"]);
});
