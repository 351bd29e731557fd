/**
 * The resources plugin in-process (a kernel with it alone, and the result
 * mappers where a resource's content is shown; fixture servers over the SDK's
 * in-memory transport pair): its contract with servers and with Pi's session.
 *
 * - Three fixed tools, defined with the first connected server that offers
 *   resources and active only while one does; each line names its server.
 * - `/mcp subscribe` / `unsubscribe` record the wish in the session and make
 *   it live: `resources/subscribe` on 2025-era servers, one
 *   `subscriptions/listen` stream on 2026-07-28 servers. A refusal fails the
 *   command and withdraws the wish; the session's end releases them.
 * - A change of a subscribed resource queues one notice for the next turn;
 *   the resource is never read or injected on the host's own account.
 */
import type { McpServer } from "@modelcontextprotocol/server";
import { afterEach, describe, expect, it } from "vitest";
import { ResourcesPlugin } from "../../plugins/resources/index.ts";
import { SUBSCRIPTION_ENTRY } from "../../plugins/resources/session-entries.ts";
import { ResultMappingPlugin } from "../../plugins/result-mapping/index.ts";
import { MESSAGE_TYPES, RESOURCE_TOOLS } from "../../src/kernel/pi-part.ts";
import { ConnectionPool } from "../../src/runtime/pool.ts";
import { fakeServices } from "../helpers/services.ts";
import { until } from "../helpers/wait.ts";
import { pluginHost, type FixtureServer, type PluginTestHost, stopAllHosts, watchedServices } from "./harness.ts";

afterEach(stopAllHosts);

const SECRET = "resource-secret-4711";

/** A server with subscribable resources `note://<name>` (any name reads). */
function notes(era: "modern" | "legacy" = "modern", settings: Record<string, unknown> = {}): FixtureServer {
  return {
    era,
    options: { capabilities: { resources: { subscribe: true, listChanged: true } } },
    settings,
    build(server: McpServer) {
      server.registerResource("a", "note://a", { mimeType: "text/plain", description: "The first note" }, async (uri) => ({
        contents: [{ uri: uri.href, mimeType: "text/plain", text: "note a" }],
      }));
      if (era === "legacy") {
        server.server.setRequestHandler("resources/subscribe", (request) => {
          if (request.params.uri.startsWith("refused:")) throw new Error("not subscribable");
          return {};
        });
        server.server.setRequestHandler("resources/unsubscribe", () => ({}));
      }
    },
  };
}

describe("/mcp status", () => {
  it("lists the active subscriptions sorted by server and URI, whatever order they were made in", async () => {
    const h = await pluginHost([new ResourcesPlugin()], { zeta: notes(), alpha: notes("legacy") }, { services: fakeServices() });
    await h.waitForState("zeta", "connected");
    await h.waitForState("alpha", "connected");
    for (const line of ["subscribe zeta note://b", "subscribe alpha note://y", "subscribe zeta note://a", "subscribe alpha note://b"]) {
      expect((await h.command(line)).exitCode, line).toBe(0);
    }
    const status = (await h.command("status")).output.split("\n");
    const at = status.indexOf("Active resource subscriptions:");
    expect(at).toBeGreaterThan(-1);
    expect(status.slice(at + 1)).toEqual(["  alpha note://b", "  alpha note://y", "  zeta note://a", "  zeta note://b"]);
  });

  it("shows subscription lines as every observer text: terminal controls stripped and settings' secrets redacted", async () => {
    const h = await pluginHost(
      [new ResourcesPlugin()],
      { docs: notes("modern", { environment: { TOKEN: "${PIN_SECRET}" } }) },
      { services: fakeServices(), env: { ...process.env, PIN_SECRET: SECRET } },
    );
    await h.waitForState("docs", "connected");
    expect((await h.command(`subscribe docs note://${SECRET}/\u001b[31mred`)).exitCode).toBe(0);
    const status = (await h.command("status")).output;
    expect(status).toContain("  docs note://‹redacted›/red");
    expect(status).not.toContain(SECRET);
    expect(status).not.toContain("\u001b");
  });
});

/** The fixed tool `name` as the plugin defined it. */
function tool(services: ReturnType<typeof watchedServices>, name: string) {
  const found = services.piTools.tools.get(name);
  if (!found) throw new Error(`${name} is not defined`);
  return found;
}

const text = (outcome: { content: readonly { type: string; text?: string }[] }) =>
  outcome.content.flatMap((item) => (item.type === "text" ? [item.text] : [])).join("\n");

describe("the fixed tools", () => {
  it("are defined with the first server that offers resources, active only while one is connected", async () => {
    const services = watchedServices();
    const h = await pluginHost(
      [new ResourcesPlugin()],
      { plain: { options: { capabilities: { tools: {} } }, build() {} }, docs: notes() },
      { services },
    );
    await h.waitForState("plain", "connected");
    await h.waitForState("docs", "connected");
    await services.until(
      () => services.piTools.active.size === 3,
      () => `active: ${[...services.piTools.active]}`,
    );
    expect([...services.piTools.tools.keys()]).toEqual(Object.values(RESOURCE_TOOLS));
    await h.host.server("docs")!.close();
    await services.until(
      () => services.piTools.active.size === 0,
      () => `active: ${[...services.piTools.active]}`,
    );
  });

  it("list every server's resources and templates, each line naming its server; a server's failure is its own line", async () => {
    const services = watchedServices();
    const broken: FixtureServer = {
      era: "legacy",
      options: { capabilities: { resources: {} } },
      build(server) {
        server.server.setRequestHandler("resources/list", () => {
          throw new Error("the index is gone");
        });
      },
    };
    const h = await pluginHost([new ResourcesPlugin()], { docs: notes(), broken }, { services });
    await h.waitForState("docs", "connected");
    await h.waitForState("broken", "connected");
    const all = await tool(services, RESOURCE_TOOLS.list).execute({}, {});
    expect(text(all).split("\n")).toEqual([
      expect.stringMatching(/^broken: .*the index is gone/),
      "docs: note://a (a, text/plain) — The first note",
    ]);
    expect(all.details).toMatchObject({ resources: { docs: [{ uri: "note://a" }] }, failures: { broken: expect.any(String) } });
    await expect(tool(services, RESOURCE_TOOLS.list).execute({ server: "broken" }, {})).rejects.toThrow(/the index is gone/);
    await expect(tool(services, RESOURCE_TOOLS.list).execute({ server: "nobody" }, {})).rejects.toThrow(
      'no connected MCP server "nobody" offers resources',
    );
    expect(text(await tool(services, RESOURCE_TOOLS.templates).execute({ server: "docs" }, {}))).toBe("No resources.");
  });

  it("read one resource, its content shown by the result mappers with its server and URI", async () => {
    const services = watchedServices();
    const h = await pluginHost([new ResourcesPlugin(), new ResultMappingPlugin()], { docs: notes() }, { services });
    await h.waitForState("docs", "connected");
    const read = await tool(services, RESOURCE_TOOLS.read).execute({ server: "docs", uri: "note://a" }, {});
    expect(text(read)).toBe("[resource note://a from docs, text/plain]\nnote a");
    expect(read.isError).toBe(false);
    expect(h.server("docs").methods()).toContain("resources/read");
  });
});

/** Resolves once `count` Resource Update Notices are queued. */
function notices(services: ReturnType<typeof watchedServices>, count: number) {
  const queued = () => services.session.messages.filter((message) => message.customType === MESSAGE_TYPES.resourceUpdate);
  return services.until(
    () => queued().length >= count,
    () => `${queued().length} of ${count} notices`,
  );
}

describe.each(["legacy", "modern"] as const)("subscriptions on a %s-era server", (era) => {
  async function subscribed(services = watchedServices()): Promise<{ h: PluginTestHost; services: ReturnType<typeof watchedServices> }> {
    const h = await pluginHost([new ResourcesPlugin()], { docs: notes(era) }, { services });
    await h.waitForState("docs", "connected");
    expect((await h.command("subscribe docs note://a")).output).toBe('Subscribed to note://a on "docs"');
    return { h, services };
  }

  it("record the wish in the session, subscribe on the server, and queue one notice per change for the next turn", async () => {
    const { h, services } = await subscribed();
    expect(services.session.log).toEqual([
      { customType: SUBSCRIPTION_ENTRY, data: { version: 1, action: "subscribe", server: "docs", uri: "note://a" } },
    ]);
    expect(h.server("docs").methods()).toContain(era === "legacy" ? "resources/subscribe" : "subscriptions/listen");
    await h.server("docs").instance().server.sendResourceUpdated({ uri: "note://a" });
    await notices(services, 1);
    expect(services.session.messages).toEqual([
      {
        customType: MESSAGE_TYPES.resourceUpdate,
        content:
          '[MCP resource update] Server "docs" reports that resource note://a changed. It has not been read: use read_mcp_resource if you need its new content.',
        details: { version: 1, server: "docs", uri: "note://a" },
      },
    ]);
    expect(h.server("docs").methods()).not.toContain("resources/read"); // never read on the host's own account
  });

  it("end with unsubscribe: no notice after it", async () => {
    const { h, services } = await subscribed();
    expect((await h.command("unsubscribe docs note://a")).exitCode).toBe(0);
    expect(h.host.statusLines()).toEqual([]);
    if (era === "legacy") expect(h.server("docs").methods()).toContain("resources/unsubscribe");
    await h.server("docs").instance().server.sendResourceUpdated({ uri: "note://a" });
    await h.server("docs").instance().server.sendResourceUpdated({ uri: "note://b" });
    // A request after the notifications: answered only once they were handled (one channel, in order).
    await tool(services, RESOURCE_TOOLS.list).execute({ server: "docs" }, {});
    expect(services.session.messages).toEqual([]);
  });

  it("follow the active branch: a branch without the wish unsubscribes, one with it subscribes again", async () => {
    const { h, services } = await subscribed();
    // The sync after a branch change announces nothing: its outcome is polled.
    services.session.switchBranch([]);
    await until(
      () => h.host.statusLines().length === 0,
      10_000,
      () => h.host.statusLines().join("\n"),
    );
    services.session.switchBranch([
      { customType: SUBSCRIPTION_ENTRY, data: { version: 1, action: "subscribe", server: "docs", uri: "note://z" } },
    ]);
    await until(
      () => h.host.statusLines().join("\n") === "Active resource subscriptions:\n  docs note://z",
      10_000,
      () => h.host.statusLines().join("\n"),
    );
  });
});

describe("a refused subscription", () => {
  it("fails the command with the server's answer and withdraws the wish from the session", async () => {
    const services = watchedServices();
    const h = await pluginHost([new ResourcesPlugin()], { docs: notes("legacy") }, { services });
    await h.waitForState("docs", "connected");
    const result = await h.command("subscribe docs refused:x");
    expect(result.exitCode).not.toBe(0);
    expect(result.output).toMatch(/server "docs" refused the subscription to refused:x: .*not subscribable/);
    expect(services.session.log.map((entry) => (entry.data as { action: string }).action)).toEqual(["subscribe", "unsubscribe"]);
    expect(h.host.statusLines()).toEqual([]);
  });
});

describe("the session's end", () => {
  it("releases its subscriptions on a connection it hands to the next session (2025 era: resources/unsubscribe)", async () => {
    const pool = new ConnectionPool();
    const h = await pluginHost([new ResourcesPlugin()], { docs: notes("legacy") }, { services: watchedServices(), pool });
    await h.waitForState("docs", "connected");
    await h.command("subscribe docs note://a");
    await h.host.shutdown(undefined, "replaced");
    expect(h.server("docs").instance().isConnected()).toBe(true); // retained for the next session
    expect(
      h
        .server("docs")
        .methods()
        .filter((method) => method.startsWith("resources/") && method.endsWith("subscribe")),
    ).toEqual(["resources/subscribe", "resources/unsubscribe"]);
    await pool.drain();
  });
});
