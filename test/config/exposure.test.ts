import { expect, it } from "vitest";
import { resolveConfig } from "../../src/config/resolve.ts";
import { checkedScope } from "../../src/config/schema.ts";
import { exposureOf } from "../../src/runtime/exposure.ts";

const sources = { globalPath: "/g/settings.json", projectPath: "/p/.pi/settings.json", projectTrusted: true };
const load = (global: unknown, project?: unknown) =>
  resolveConfig(
    checkedScope("global", "/g/settings.json", global),
    project === undefined ? undefined : checkedScope("project", "/p/.pi/settings.json", project),
    {},
    sources,
  );

it("defaults every tool to auto exposure (the context budget decides) and the budget to 10% of the context window", () => {
  const config = load({ servers: { s: { command: "node" } } });
  expect(config.exposure).toBe("auto");
  expect(exposureOf(config, config.servers[0]!.definition, "anything")).toBe("auto");
  expect(config.contextBudget).toEqual({ percent: 10 });
});

it("reads mcp.contextBudget as a share or a number of tokens (the project's over the global one) and rejects other values", () => {
  expect(load({ contextBudget: "25%" }).contextBudget).toEqual({ percent: 25 });
  expect(load({ contextBudget: 30000 }).contextBudget).toEqual({ tokens: 30000 });
  expect(load({ contextBudget: 30000 }, { contextBudget: "5%" }).contextBudget).toEqual({ percent: 5 });
  for (const wrong of ["0%", "150%", "ten", 0, -5, 1.5, true]) {
    const config = load({ contextBudget: wrong });
    expect(config.valid).toBe(false);
    expect(config.issues.map((issue) => issue.path)).toContain("mcp.contextBudget");
  }
});

it("takes the tool pattern first, then the server, then the top level (project over global)", () => {
  const config = load(
    {
      exposure: "codemode",
      servers: {
        s: { command: "node", exposure: "deferred", toolExposure: { "delete_*": "hidden", echo: "direct" } },
        t: { command: "node" },
      },
    },
    { exposure: "deferred" },
  );
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
  expect(config.issues.map((issue) => issue.path).sort()).toEqual([
    "mcp.exposure",
    "mcp.servers.s.exposure",
    "mcp.servers.s.toolExposure.echo",
  ]);
});
