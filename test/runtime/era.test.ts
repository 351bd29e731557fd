// One handshake per stdio process: a server whose process cannot take the
// initialize that follows the era probe (a bridge that opens its upstream
// session on the first message, a server that exits on a request before
// initialize) gets a fresh process greeted with initialize alone, and later
// connects of the same server skip the probe. An ordinary 2025-era server
// keeps its one process per connect.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fixtureServer, startHost, stopAllHosts, textOf, type TestHost } from "../helpers/host.ts";
import { handshakesByProcess } from "../helpers/servers.ts";

let dir: string;
let events: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "pi-mcp-era-"));
  events = join(dir, "events.jsonl");
});
afterEach(async () => {
  await stopAllHosts();
  await rm(dir, { recursive: true, force: true });
});

/** Kills the server's process and waits until the host has connected a new one. */
async function crashAndReconnect(h: TestHost, name: string): Promise<void> {
  const pid = h.status(name).pid!;
  process.kill(pid, "SIGKILL");
  await h.waitUntil(() => h.status(name).state === "connected" && h.status(name).pid !== pid);
}

describe("a stdio process that cannot take a handshake after the probe", () => {
  it("a bridge that spends its one handshake on the probe: a fresh process gets initialize alone, and a reconnect skips the probe", async () => {
    const h = await startHost({ b: fixtureServer("era-2025", { FIXTURE_PROBE: "spends", FIXTURE_EVENTS: events }) });
    await h.waitForState("b", "connected");
    expect(textOf(await h.call("mcp__b__echo", { text: "through the bridge" }))).toBe("through the bridge");
    expect(h.states("b")).toEqual(["connecting", "connected"]);
    expect(await handshakesByProcess(events)).toEqual([["server/discover", "initialize"], ["initialize"]]);
    expect(h.host.server("b")!.log.text()).toContain(
      "the server's process could not take a handshake after the server/discover probe (Invalid Request: Server already initialized): starting it again with initialize alone",
    );

    await crashAndReconnect(h, "b");
    expect(textOf(await h.call("mcp__b__echo", { text: "again" }))).toBe("again");
    expect((await handshakesByProcess(events)).slice(2)).toEqual([["initialize"]]);
  });

  it("a server that exits on the probe: its retry gets initialize alone, and so does a reconnect", async () => {
    // The first connect takes a retry, and a crash within 30 s of connecting counts as one more attempt.
    const h = await startHost(
      { x: fixtureServer("era-2025", { FIXTURE_PROBE: "exit", FIXTURE_EVENTS: events }) },
      { retry: { maxRetries: 3 } },
    );
    await h.waitForState("x", "connected");
    expect(textOf(await h.call("mcp__x__echo", { text: "hi" }))).toBe("hi");
    // Exiting on the probe looks like failing to start: the attempt fails as one, and its retry greets with initialize.
    expect(h.states("x")).toEqual(["connecting", "retrying", "connecting", "connected"]);
    expect(await handshakesByProcess(events)).toEqual([["server/discover"], ["initialize"]]);
    expect(h.host.server("x")!.log.text()).toContain("ended on the server/discover probe: the next attempt sends initialize alone");

    await crashAndReconnect(h, "x");
    expect((await handshakesByProcess(events)).slice(2)).toEqual([["initialize"]]);
  });

  it("an ordinary 2025-era server keeps one process per connect: probed in place on the first, initialize alone on a reconnect", async () => {
    const h = await startHost({ o: fixtureServer("era-2025", { FIXTURE_EVENTS: events }) });
    await h.waitForState("o", "connected");
    expect(await handshakesByProcess(events)).toEqual([["server/discover", "initialize"]]);
    expect(h.host.server("o")!.log.text()).not.toContain("starting it again");

    await crashAndReconnect(h, "o");
    expect(textOf(await h.call("mcp__o__echo", { text: "back" }))).toBe("back");
    expect(await handshakesByProcess(events)).toEqual([["server/discover", "initialize"], ["initialize"]]);
  });

  it("a 2026-07-28 server that starts after the probe's time: a fresh process is probed again, for the connect timeout", async () => {
    // The probe gets 3 s on stdio; this server answers nothing for 3.5 s, then refuses the initialize that followed the probe.
    const h = await startHost({ s: fixtureServer("slow-start", { FIXTURE_LEGACY: "reject", FIXTURE_START_DELAY_MS: "3500" }) });
    await h.waitForState("s", ["connected", "failed"], 40_000);
    expect(h.status("s")).toMatchObject({ state: "connected" });
    expect(h.host.server("s")!.log.text()).toContain("starting it again and probing");
    expect(textOf(await h.call("mcp__s__echo", { text: "late" }))).toBe("late");
  });
});
