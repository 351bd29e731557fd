// Resource catalogs kept with the connection, and optional lists a server does
// not implement (-32601 Method not found means "none"), through OUR host:
// the real @modelcontextprotocol/server-postgres against a real PostgreSQL,
// server-everything, and the resource-catalog fixture that counts its listings.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { MAX_CATALOG_PAGES } from "../../src/runtime/paging.ts";
import { ConnectionPool } from "../../src/runtime/pool.ts";
import { fileURLToPath } from "node:url";
import { nodePath } from "../helpers/servers.ts";
import {
  eventually,
  everythingStdio,
  fixtureServer,
  packageServer,
  startHost,
  stopAllHosts,
  textOf,
  until,
  type RawDefinition,
  type TestHost,
} from "../helpers/host.ts";
import { startPostgres, type RunningPostgres } from "../helpers/postgres.ts";
import { fakeServices, type FakeServices } from "../helpers/services.ts";

const POSTGRES = "@modelcontextprotocol/server-postgres";
/** An SDK v2 server that speaks only 2026-07-28; its tool `add` adds a resource. */
const RESOURCE_SERVER_2026 = fileURLToPath(new URL("./fixtures/resource-server.mjs", import.meta.url));

let postgres: RunningPostgres;
beforeAll(async () => {
  postgres = await startPostgres();
  await postgres.sql("CREATE TABLE items (id integer PRIMARY KEY, name text)");
}, 60_000);
afterAll(async () => {
  await postgres?.stop();
});
afterEach(stopAllHosts);

const pg = (url = postgres.url): RawDefinition => packageServer(POSTGRES, [url]);
const catalog = (environment: Record<string, string> = {}) => fixtureServer("resource-catalog", environment);

/** Calls a fixed resource tool the way Pi would. */
async function fixed(services: FakeServices, tool: string, args: Record<string, unknown> = {}) {
  const found = services.piTools.tools.get(tool);
  if (!found || !services.piTools.active.has(tool)) throw new Error(`${tool} is not active`);
  return found.execute(args, {});
}

/** How many list requests the resource-catalog fixture has answered. */
async function listings(h: TestHost, server: string): Promise<Record<string, number>> {
  return JSON.parse(textOf(await h.call(`mcp__${server}__counts`))) as Record<string, number>;
}

async function withResources(servers: Record<string, RawDefinition>, options = {}) {
  const services = fakeServices();
  const h = await startHost(servers, { services, ...options });
  for (const name of Object.keys(servers)) await h.waitForState(name, "connected");
  await until(() => services.piTools.active.has("list_mcp_resource_templates"), 30_000);
  return { h, services };
}

describe("a server that does not implement an optional list (-32601)", () => {
  it("server-postgres answers resources/templates/list with -32601: it stays connected with no templates, logged once", async () => {
    const { h, services } = await withResources({ pg: pg() });
    expect(h.status("pg").state).toBe("connected");
    expect(await h.host.server("pg")!.catalogCounts()).toEqual({ tools: 1, resources: 1, resourceTemplates: 0, prompts: 0 });
    for (let i = 0; i < 2; i++)
      expect(textOf(await fixed(services, "list_mcp_resource_templates", { server: "pg" }))).toBe("No resources.");
    const log = h.host.server("pg")!.log.text();
    expect(log.split("does not implement resources/templates/list (-32601 Method not found)")).toHaveLength(2);
    expect(textOf(await fixed(services, "list_mcp_resources", { server: "pg" }))).toMatch(
      /^pg: postgres:\/\/.*\/items\/schema \("items" database schema, application\/json\)$/,
    );
  });

  it("list_mcp_resource_templates across servers keeps listing the others' templates", async () => {
    const { services } = await withResources({ everything: everythingStdio(), pg: pg() });
    const listed = textOf(await fixed(services, "list_mcp_resource_templates"));
    expect(listed.split("\n").filter((line) => line.startsWith("everything: ")).length).toBeGreaterThanOrEqual(2);
    expect(listed).not.toMatch(/^pg:/m);
    expect(listed).not.toMatch(/fail|not found/i);
  });

  it("prompts and templates a server declares but does not implement count zero in test, and /mcp prompt completion finds none", async () => {
    const h = await startHost({ lists: catalog() });
    await h.waitForState("lists", "connected");
    expect(await h.host.server("lists")!.catalogCounts()).toEqual({ tools: 3, resources: 2, resourceTemplates: 0, prompts: 0 });
    const completion = h.host.kernelInstance.commands.find((command) => command.name === "prompt")!.complete!;
    expect(await completion({ words: ["lists", ""], head: "lists ", host: h.host })).toBeNull();
    const log = h.host.server("lists")!.log.text();
    expect(log).toContain("does not implement prompts/list (-32601");
    expect(log.split("does not implement resources/templates/list")).toHaveLength(2);
  });

  it("completion/complete answered with -32601 means no suggestions, said once in the server's log", async () => {
    const h = await startHost({ lists: catalog({ FIXTURE_PROMPTS: "1" }) });
    await h.waitForState("lists", "connected");
    const completion = h.host.kernelInstance.commands.find((command) => command.name === "prompt")!.complete!;
    expect(await completion({ words: ["lists", ""], head: "lists ", host: h.host })).toEqual([expect.objectContaining({ label: "greet" })]);
    for (let i = 0; i < 2; i++)
      expect(await completion({ words: ["lists", "greet", "--arg", "name=A"], head: "lists greet --arg ", host: h.host })).toBeNull();
    expect(h.host.server("lists")!.log.text().split("does not implement completion/complete (-32601")).toHaveLength(2);
  });

  it("a list that fails for another reason names the method; the other servers are still listed", async () => {
    const { services } = await withResources({ everything: everythingStdio(), deaddb: pg("postgresql://postgres@127.0.0.1:1/postgres") });
    const listed = textOf(await fixed(services, "list_mcp_resources"));
    expect(listed).toMatch(/^deaddb: deaddb resources\/list failed: .*ECONNREFUSED 127\.0\.0\.1:1/m);
    expect(listed.split("\n").filter((line) => line.startsWith("everything: ")).length).toBeGreaterThanOrEqual(7);
    await expect(fixed(services, "list_mcp_resources", { server: "deaddb" })).rejects.toThrow(
      /^deaddb resources\/list failed: .*ECONNREFUSED/,
    );
  });
});

describe("resource catalogs kept with the connection", () => {
  it("are listed once (every page), so the tools answer from the cache without asking the server again", async () => {
    const { h, services } = await withResources({ cat: catalog({ FIXTURE_PAGES: "3", FIXTURE_TEMPLATES: "1" }) });
    const first = textOf(await fixed(services, "list_mcp_resources"));
    expect(first.split("\n")).toHaveLength(6);
    expect(first).toContain("cat: res://p3/1 (page 3 item 1, text/plain)");
    await fixed(services, "list_mcp_resources", { server: "cat" });
    await fixed(services, "list_mcp_resource_templates");
    expect(await listings(h, "cat")).toMatchObject({ "resources/list": 3, "resources/templates/list": 1 });
  });

  it("are listed beside the tools without holding the connection up: a server still listing its resources is connected", async () => {
    const { h, services } = await withResources({ held: catalog({ FIXTURE_HOLD_LIST: "1" }) });
    expect(await listings(h, "held")).toMatchObject({ "resources/list": 1 });
    const listing = fixed(services, "list_mcp_resources");
    await h.call("mcp__held__release");
    expect(textOf(await listing)).toContain("held: res://p1/0");
    expect(await listings(h, "held")).toMatchObject({ "resources/list": 1 });
  });

  it("are listed again on notifications/resources/list_changed", async () => {
    const { h, services } = await withResources({ cat: catalog() });
    expect(await listings(h, "cat")).toMatchObject({ "resources/list": 1 });
    await h.call("mcp__cat__add", { name: "fresh" });
    await eventually(async () => textOf(await fixed(services, "list_mcp_resources")).includes("cat: res://added/fresh"), 15_000);
    expect(await listings(h, "cat")).toMatchObject({ "resources/list": 2 });
  });

  it("2026-07-28 servers announce resource list changes on the subscriptions/listen stream, and the catalog follows", async () => {
    const { h, services } = await withResources({ modern: { command: nodePath(), args: [RESOURCE_SERVER_2026] } });
    expect(h.status("modern").protocolVersion).toBe("2026-07-28");
    expect(textOf(await fixed(services, "list_mcp_resources"))).not.toContain("note://late");
    await h.call("mcp__modern__add", { name: "late" });
    await eventually(async () => textOf(await fixed(services, "list_mcp_resources")).includes("modern: note://late"), 15_000);
  });

  it("travel with the connection to the next session: no new listing after /reload", async () => {
    const pool = new ConnectionPool();
    const first = await withResources({ cat: catalog() }, { pool });
    expect(await listings(first.h, "cat")).toMatchObject({ "resources/list": 1 });
    await first.h.host.shutdown(undefined, "replaced");
    const second = await withResources({ cat: catalog() }, { pool });
    expect(second.h.status("cat").reusedAt).toBeDefined();
    expect(textOf(await fixed(second.services, "list_mcp_resources"))).toContain("cat: res://p1/0");
    expect(await listings(second.h, "cat")).toMatchObject({ "resources/list": 1 });
    await pool.drain();
  });

  it("follow the tools' paging rules: a repeated cursor and more than 1,000 pages fail that list, by name, and the connection stands", async () => {
    const { h, services } = await withResources({
      loop: catalog({ FIXTURE_REPEAT_CURSOR: "1" }),
      endless: catalog({ FIXTURE_ENDLESS: "1" }),
    });
    await expect(fixed(services, "list_mcp_resources", { server: "loop" })).rejects.toThrow(
      /^loop resources\/list: the server repeated a pagination cursor \(page 3\)/,
    );
    await expect(fixed(services, "list_mcp_resources", { server: "endless" })).rejects.toThrow(
      `endless resources/list: more than ${MAX_CATALOG_PAGES} pages`,
    );
    expect(h.status("loop").state).toBe("connected");
    expect(textOf(await h.call("mcp__endless__counts"))).toContain('"resources/templates/list":1');
  }, 60_000);
});
