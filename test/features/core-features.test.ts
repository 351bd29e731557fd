// Resources, roots, logging and instructions through OUR host against server-everything.
import { readFile, stat } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { runCommandLine } from "../../src/commands/index.ts";
import { createKernel } from "../../src/composition.ts";
import { retainedLogPath } from "../../plugins/logging/index.ts";
import {
  eventually,
  everythingStdio,
  fixtureServer,
  piEnvironment,
  startHost,
  stopAllHosts,
  textOf,
  until,
  type TestHost,
} from "../helpers/host.ts";
import { requestSpy } from "./interactive-helpers.ts";
import { fakeServices } from "../helpers/services.ts";
import { nodePath } from "../helpers/servers.ts";
import { ConnectionPool } from "../../src/runtime/pool.ts";

afterEach(stopAllHosts);

const commands = (h: TestHost) => [...h.host.kernelInstance.commands];

describe("resources", () => {
  it("registers the three fixed tools once a connected server supports resources, and offers them only while one does", async () => {
    const none = fakeServices();
    const plain = await startHost({ basic: fixtureServer("basic") }, { services: none });
    await plain.waitForState("basic", "connected");
    await plain.waitForTools(3, { server: "basic" });
    expect(none.piTools.tools.size).toBe(0); // no server offers resources: nothing registered
    const services = fakeServices();
    const h = await startHost({ everything: everythingStdio() }, { services });
    await until(() => services.piTools.active.size === 3, 30_000);
    expect([...services.piTools.tools.keys()].sort()).toEqual(["list_mcp_resource_templates", "list_mcp_resources", "read_mcp_resource"]);
    await h.host.reconnect("everything").catch(() => undefined);
    await h.host.server("everything")!.close();
    expect(services.piTools.active.size).toBe(0);
  });

  it("lists resources and templates with their server, and reads one through the result mappers", async () => {
    const services = fakeServices();
    await startHost({ everything: everythingStdio() }, { services });
    await until(() => services.piTools.active.size === 3, 30_000);
    const listed = textOf(await services.piTools.tools.get("list_mcp_resources")!.execute({}, {}));
    expect(listed.split("\n").length).toBeGreaterThanOrEqual(7);
    expect(listed).toMatch(/^everything: \S+/);
    const templates = textOf(await services.piTools.tools.get("list_mcp_resource_templates")!.execute({ server: "everything" }, {}));
    expect(templates).toContain("{");
    const uri = /^everything: (\S+)/m.exec(listed)![1]!;
    const read = await services.piTools.tools.get("read_mcp_resource")!.execute({ server: "everything", uri }, {});
    expect(textOf(read)).toContain(uri);
    expect(textOf(read)).toContain("from everything");
    await expect(services.piTools.tools.get("read_mcp_resource")!.execute({ server: "nope", uri }, {})).rejects.toThrow(
      /no connected MCP server "nope"/,
    );
  });

  it("subscribes through /mcp subscribe, persists the wish, and queues a notice when the resource changes", async () => {
    const services = fakeServices();
    const h = await startHost({ everything: everythingStdio() }, { services });
    await until(() => services.piTools.active.size === 3, 30_000);
    const env = piEnvironment(h);
    const uri = "demo://resource/static/document/architecture.md";
    const result = await runCommandLine(commands(h), ["subscribe", "everything", uri], env);
    expect(result).toMatchObject({ exitCode: 0 });
    expect(services.session.log).toEqual([
      { customType: "pi-mcp.subscription", data: { version: 1, action: "subscribe", server: "everything", uri } },
    ]);
    const status = await runCommandLine(
      [...commands(h), ...(await import("../../src/commands/runtime.ts")).RUNTIME_COMMANDS],
      ["status"],
      env,
    );
    expect(status.output).toContain(`Active resource subscriptions:\n  everything ${uri}`);
    await h.call("mcp__everything__toggle-subscriber-updates", {});
    await until(() => services.session.messages.length > 0, 15_000);
    const notice = services.session.messages[0]!;
    expect(notice.customType).toBe("pi-mcp.resource-update");
    expect(notice.content).toContain(`Server "everything" reports that resource ${uri} changed`);
    expect(notice.content).toContain("has not been read");
  }, 30_000);

  it("replays subscriptions from the active branch only", async () => {
    const services = fakeServices();
    const h = await startHost({ everything: everythingStdio() }, { services });
    await until(() => services.piTools.active.size === 3, 30_000);
    const env = piEnvironment(h);
    const uri = "demo://resource/static/document/architecture.md";
    await runCommandLine(commands(h), ["subscribe", "everything", uri], env);
    const statusLines = () => h.host.statusLines().join("\n");
    expect(statusLines()).toContain(uri);
    services.session.switchBranch([]); // a branch without the subscription
    await until(() => !statusLines().includes(uri), 15_000);
    services.session.switchBranch([
      { customType: "pi-mcp.subscription", data: { version: 1, action: "subscribe", server: "everything", uri } },
    ]);
    await until(() => statusLines().includes(uri), 15_000);
  });
});

describe("a subscription the connected server refuses", () => {
  it("/mcp subscribe fails with the server's answer, keeps nothing in the session, and the log says so too", async () => {
    const services = fakeServices();
    const h = await startHost({ nm: fixtureServer("faulty", { FAULT: "error", FAULT_FROM: "resources/subscribe" }) }, { services });
    await h.waitForState("nm", "connected");
    const result = await runCommandLine(commands(h), ["subscribe", "nm", "faulty://note"], piEnvironment(h));
    expect(result.exitCode).not.toBe(0);
    expect(result.output).toMatch(/server "nm" refused the subscription to faulty:\/\/note: .*fault: error/);
    expect(result.output).not.toContain("Subscribed to");
    // The wish is withdrawn at once: a later reconnect does not subscribe behind the user's back.
    expect(services.session.log.map((entry) => (entry.data as { action: string }).action)).toEqual(["subscribe", "unsubscribe"]);
    expect(h.host.statusLines().join("\n")).not.toContain("faulty://note");
    expect(h.host.server("nm")!.log.text()).toContain("subscribe faulty://note failed:");
  });
});

describe("resource subscriptions on a 2026-07-28 peer (subscriptions/listen)", () => {
  const RESOURCE_SERVER_2026 = fileURLToPath(new URL("./fixtures/resource-server.mjs", import.meta.url));
  const subscribed = (server: string, uri: string) => ({
    customType: "pi-mcp.subscription",
    data: { version: 1, action: "subscribe", server, uri },
  });

  it("subscribes through one listen stream, notices only subscribed resources, and follows unsubscribe and branch changes", async () => {
    const services = fakeServices();
    const h = await startHost(
      { notes: { command: nodePath(), args: [RESOURCE_SERVER_2026], environment: { FIXTURE_EXTRA_RESOURCES: "2" } } },
      { services },
    );
    await until(() => services.piTools.active.size === 3, 30_000);
    expect(h.host.server("notes")?.status().protocolVersion).toBe("2026-07-28");
    const env = piEnvironment(h);
    const statusLines = () => h.host.statusLines().join("\n");

    expect(await runCommandLine(commands(h), ["subscribe", "notes", "note://a"], env)).toMatchObject({ exitCode: 0 });
    await until(() => statusLines().includes("notes note://a"), 15_000);
    await h.call("mcp__notes__touch", { uri: "note://b" }); // not subscribed: no notice
    await h.call("mcp__notes__touch", { uri: "note://a" });
    await until(() => services.session.messages.length > 0, 30_000);
    expect(services.session.messages.map((message) => message.details)).toEqual([{ version: 1, server: "notes", uri: "note://a" }]);

    // A second subscription replaces the stream; both resources are live.
    await runCommandLine(commands(h), ["subscribe", "notes", "note://b"], env);
    await until(() => statusLines().includes("notes note://b"), 15_000);
    await h.call("mcp__notes__touch", { uri: "note://b" });
    await until(() => services.session.messages.length === 2, 30_000);

    // Unsubscribed, and a branch without any subscription: no more notices, nothing active. (Shown with
    // two resources that never changed before, so the one-notice-per-second rule cannot hide a notice.)
    await runCommandLine(commands(h), ["subscribe", "notes", "note://n0"], env);
    await runCommandLine(commands(h), ["subscribe", "notes", "note://n1"], env);
    await until(() => statusLines().includes("notes note://n0") && statusLines().includes("notes note://n1"), 15_000);
    await runCommandLine(commands(h), ["unsubscribe", "notes", "note://n0"], env);
    await until(() => !statusLines().includes("notes note://n0"), 15_000);
    services.session.switchBranch([]);
    await until(() => !statusLines().includes("note://"), 15_000);
    await h.call("mcp__notes__touch", { uri: "note://n0" });
    await h.call("mcp__notes__touch", { uri: "note://n1" });

    // Back on a branch with n1: replayed over a new stream, and its notice comes after anything the
    // two touches above could have brought (the server writes them in that order), so the list is complete.
    services.session.switchBranch([subscribed("notes", "note://n1")]);
    await until(() => statusLines().includes("notes note://n1"), 15_000);
    await h.call("mcp__notes__touch", { uri: "note://n1" });
    await until(() => services.session.messages.length >= 3, 15_000);
    expect(services.session.messages.map((message) => message.details)).toEqual([
      { version: 1, server: "notes", uri: "note://a" },
      { version: 1, server: "notes", uri: "note://b" },
      { version: 1, server: "notes", uri: "note://n1" },
    ]);
    expect(h.host.server("notes")!.log.text()).not.toMatch(/subscribe .* failed|did not accept/);
  }, 40_000);
});

describe("resource listings", () => {
  const RESOURCE_SERVER = fileURLToPath(new URL("./fixtures/resource-server.mjs", import.meta.url));

  it("are cut to Pi's limits like any result, with the whole listing in a Result Spill", async () => {
    const services = fakeServices();
    await startHost(
      { notes: { command: nodePath(), args: [RESOURCE_SERVER, "--legacy"], environment: { FIXTURE_EXTRA_RESOURCES: "3000" } } },
      { services },
    );
    await until(() => services.piTools.active.size === 3, 30_000);
    const outcome = await services.piTools.tools.get("list_mcp_resources")!.execute({ server: "notes" }, {});
    const shown = textOf(outcome);
    expect(shown.split("\n").length).toBeLessThanOrEqual(2_010);
    const spillPath = outcome.details.spillPath as string;
    expect(shown).toContain(spillPath);
    const spilled = await readFile(spillPath, "utf8");
    expect(spilled.split("\n")).toHaveLength(3_002);
    expect(spilled).toContain("notes: note://n2999");
  }, 30_000);

  it("a stopped listing or read ends as cancelled", async () => {
    const services = fakeServices();
    await startHost({ everything: everythingStdio() }, { services });
    await until(() => services.piTools.active.size === 3, 30_000);
    for (const [tool, args] of [
      ["list_mcp_resources", {}],
      ["read_mcp_resource", { server: "everything", uri: "demo://resource/static/document/architecture.md" }],
    ] as const) {
      const stop = new AbortController();
      stop.abort();
      await expect(services.piTools.tools.get(tool)!.execute(args, { signal: stop.signal })).rejects.toThrow(/was cancelled$/);
    }
  }, 30_000);
});

describe("resource subscriptions belong to their session", () => {
  const RESOURCE_SERVER = fileURLToPath(new URL("./fixtures/resource-server.mjs", import.meta.url));
  for (const era of ["2025", "2026"] as const) {
    it(`a session that takes over a connection hears nothing about the previous session's subscriptions (${era} era)`, async () => {
      const pool = new ConnectionPool();
      const servers = { notes: { command: nodePath(), args: [RESOURCE_SERVER, ...(era === "2025" ? ["--legacy"] : [])] } };
      const firstServices = fakeServices();
      const first = await startHost(servers, { services: firstServices, pool });
      await until(() => firstServices.piTools.active.size === 3, 30_000);
      await runCommandLine(commands(first), ["subscribe", "notes", "note://a"], piEnvironment(first));
      await until(() => first.host.statusLines().join("\n").includes("notes note://a"), 15_000);
      const pid = first.status("notes").pid;
      await first.host.shutdown(undefined, "replaced");
      // The released session starts nothing through the connection it handed on.
      await expect(firstServices.piTools.tools.get("read_mcp_resource")!.execute({ server: "notes", uri: "note://a" }, {})).rejects.toThrow(
        /no connected MCP server "notes"/,
      );

      const services = fakeServices(); // a new session: no subscription entries
      const second = await startHost(servers, { services, pool });
      await until(() => services.piTools.active.size === 3, 30_000);
      expect(second.status("notes")).toMatchObject({ pid, reusedAt: expect.any(Number) });
      const touched = textOf(await second.call("mcp__notes__touch", { uri: "note://a" }));
      if (era === "2025") expect(touched).toBe("no subscriber for note://a"); // unsubscribed when the first session ended
      expect(second.host.statusLines().join("\n")).not.toContain("note://a");

      // Its own subscription works on the adopted connection; its notice comes after anything the touch
      // above could have brought (the server writes them in that order), so it is the only one.
      await runCommandLine(commands(second), ["subscribe", "notes", "note://b"], piEnvironment(second));
      await until(() => second.host.statusLines().join("\n").includes("notes note://b"), 15_000);
      await second.call("mcp__notes__touch", { uri: "note://b" });
      await until(() => services.session.messages.length > 0, 15_000);
      expect(services.session.messages.map((message) => message.details)).toEqual([{ version: 1, server: "notes", uri: "note://b" }]);
    }, 30_000);
  }
});

describe("roots", () => {
  it("answers roots/list with Pi's working directory as a file:// root", async () => {
    const h = await startHost({ everything: everythingStdio() });
    await h.waitForTools(14, { server: "everything" });
    const roots = textOf(await h.call("mcp__everything__get-roots-list", {}));
    expect(roots).toContain(`file://${process.cwd()}`);
  });

  it("a kernel without the roots feature declares no roots capability (the server offers no get-roots-list)", async () => {
    const h = await startHost({ everything: everythingStdio() }, { kernel: createKernel({ disable: ["roots"] }) });
    await h.waitForTools(13, { server: "everything" });
    await h.host.flushTools(); // the whole catalog has reached Pi
    expect([...h.sink.active]).not.toContain("mcp__everything__get-roots-list");
  });
});

describe("logging", () => {
  const LEVEL = /\[(debug|info|notice|warning|error|critical|alert|emergency)\]/;
  it("keeps MCP log messages in the retained log, shows them with /mcp logs, and writes the private log file", async () => {
    const h = await startHost({ everything: everythingStdio() });
    await h.waitForTools(13, { server: "everything" });
    await h.call("mcp__everything__toggle-simulated-logging", {});
    await until(() => LEVEL.test(h.host.server("everything")!.log.text()), 15_000);
    const shown = await runCommandLine(commands(h), ["logs", "everything"], piEnvironment(h));
    expect(shown.exitCode).toBe(0);
    expect(shown.output).toContain("== everything ==");
    expect(shown.output).toMatch(LEVEL);
    const file = retainedLogPath(h.privateDir, "everything");
    // Writes are folded for 50 ms: wait for the one that carries a log message.
    await eventually(
      async () => (LEVEL.test(await readFile(file, "utf8").catch(() => "")) ? true : undefined),
      15_000,
      () => `${file} holds no MCP log message`,
    );
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  }, 30_000);

  it("writes what is waiting when the host shuts down, and nothing after", async () => {
    const h = await startHost({ basic: fixtureServer("basic") });
    await h.waitForState("basic", "connected");
    const log = h.host.server("basic")!.log;
    const file = retainedLogPath(h.privateDir, "basic");
    log.append("last words before shutdown\n"); // folded for 50 ms: not on disk yet
    await h.host.shutdown(); // (h.stop() would also remove the folder)
    expect(await readFile(file, "utf8")).toContain("last words before shutdown");
    // A text appended now schedules no write: the writer would fold it with a timer (or write at once), and none is set.
    vi.useFakeTimers({ toFake: ["setTimeout", "setImmediate"] });
    try {
      log.append("after shutdown\n");
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
    expect(await readFile(file, "utf8")).not.toContain("after shutdown");
  });

  it("never sends logging/setLevel on its own", async () => {
    const spy = requestSpy();
    const h = await startHost({ everything: everythingStdio() }, { kernel: createKernel({ plugins: [spy.plugin] }) });
    await h.waitForTools(13, { server: "everything" });
    // A connect whose every step has finished (reconnect resolves after the plugins' serverConnected work).
    await h.host.reconnect("everything");
    expect(spy.sent).toContain("everything tools/list");
    expect(spy.sent.filter((request) => request.endsWith(" logging/setLevel"))).toEqual([]);
  });
});

describe("instructions", () => {
  it("appends one attributed section per server with instructions, in name order, and nothing for others", async () => {
    const h = await startHost({
      zeta: fixtureServer("basic", { FIXTURE_INSTRUCTIONS: "Zeta guidance." }),
      alpha: fixtureServer("basic", { FIXTURE_INSTRUCTIONS: "Alpha guidance." }),
      quiet: fixtureServer("basic"),
    });
    await h.waitForTools(9);
    await h.host.flushTools();
    const prompt = h.host.systemPrompt("BASE");
    expect(prompt.startsWith("BASE\n\n")).toBe(true);
    expect(prompt.indexOf('## MCP server "alpha"')).toBeLessThan(prompt.indexOf('## MCP server "zeta"'));
    expect(prompt).toContain("Alpha guidance.");
    expect(prompt).not.toContain('"quiet"');
    expect(prompt).not.toContain("mcp__alpha__echo"); // no tool rosters
    expect(h.host.systemPrompt("BASE")).toBe(prompt); // deterministic
  });

  it("leaves the system prompt alone without the instructions feature", async () => {
    const h = await startHost(
      { alpha: fixtureServer("basic", { FIXTURE_INSTRUCTIONS: "Alpha guidance." }) },
      { kernel: createKernel({ disable: ["instructions"] }) },
    );
    await h.waitForTools(3);
    await h.host.flushTools();
    expect(h.host.systemPrompt("BASE")).toBe("BASE");
  });
});
