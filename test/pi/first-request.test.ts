// What the Pi entry decides before the rest of pi-mcp is loaded: how long the first agent start may wait for
// servers (only without a terminal UI, only when the known catalogs do not cover every server and the raw
// settings name one and do not turn the wait off; then as long as firstRequestWaitMs allows), read from real
// settings files.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { firstRequestBound } from "../../src/config/settings-stamp.ts";
import { firstStartBound, runsWithoutTerminal } from "../../src/pi/first-request.ts";
import { DEFAULTS } from "../../src/kernel/settings.ts";
import type { CachedStart } from "../../src/runtime/catalog-cache.ts";
import { useSandbox } from "../helpers/tmp.ts";

const sandbox = useSandbox();

describe("runsWithoutTerminal", () => {
  it("is true in print, JSON and RPC mode and false in the TUI; without a mode, where there is no UI", () => {
    expect(runsWithoutTerminal({ mode: "tui", hasUI: true })).toBe(false);
    expect(runsWithoutTerminal({ mode: "print", hasUI: false })).toBe(true);
    expect(runsWithoutTerminal({ mode: "json", hasUI: false })).toBe(true);
    expect(runsWithoutTerminal({ mode: "rpc", hasUI: true })).toBe(true);
    expect(runsWithoutTerminal({ mode: undefined as never, hasUI: true })).toBe(false);
    expect(runsWithoutTerminal({ mode: undefined as never, hasUI: false })).toBe(true);
  });
});

describe("firstRequestBound", () => {
  const scene = async (global: unknown, project?: unknown) => {
    const box = sandbox();
    await box.writeJson(box.globalSettings, global);
    if (project !== undefined) {
      await mkdir(join(box.projectDir, ".pi"), { recursive: true });
      await writeFile(join(box.projectDir, ".pi/settings.json"), JSON.stringify(project));
    }
    return firstRequestBound(box.agentDir, box.projectDir).servers;
  };
  const server = { command: "node" };

  it("is 0 when no settings file names a server, or a broken one", async () => {
    expect(await scene({})).toBe(0);
    expect(await scene({ mcp: { servers: {} } })).toBe(0);
    expect(await scene("not an object")).toBe(0);
  });

  it("is firstRequestWaitMs as written, or its default, when the global or the project settings name a server", async () => {
    expect(await scene({ mcp: { servers: { a: server } } })).toBe(DEFAULTS.firstRequestWaitMs);
    expect(await scene({}, { mcp: { servers: { a: server } } })).toBe(DEFAULTS.firstRequestWaitMs);
    expect(await scene({ mcp: { firstRequestWaitMs: 2_000, servers: { a: server } } })).toBe(2_000);
    // Not a valid wait: the default (the settings' validation says what is wrong later).
    expect(await scene({ mcp: { firstRequestWaitMs: -1, servers: { a: server } } })).toBe(DEFAULTS.firstRequestWaitMs);
    expect(await scene({ mcp: { firstRequestWaitMs: "long", servers: { a: server } } })).toBe(DEFAULTS.firstRequestWaitMs);
  });

  it("is 0 when firstRequestWaitMs is 0 wherever it may come from; the larger when a project may change it", async () => {
    expect(await scene({ mcp: { firstRequestWaitMs: 0, servers: { a: server } } })).toBe(0);
    expect(await scene({ mcp: { firstRequestWaitMs: 0, servers: { a: server } } }, { mcp: { firstRequestWaitMs: 0 } })).toBe(0);
    expect(await scene({ mcp: { firstRequestWaitMs: 0, servers: { a: server } } }, { mcp: { firstRequestWaitMs: 3_000 } })).toBe(3_000);
    // A project's 0 holds only when the project is trusted: the global value (here its default) still may.
    expect(await scene({ mcp: { servers: { a: server } } }, { mcp: { firstRequestWaitMs: 0 } })).toBe(DEFAULTS.firstRequestWaitMs);
    expect(await scene({ mcp: { firstRequestWaitMs: 9_000, servers: { a: server } } }, { mcp: { firstRequestWaitMs: 1_000 } })).toBe(9_000);
  });
  it("bounds pi-mcp's own start-up by connectTimeoutMs as written, or its default, and not at all when the wait is off", async () => {
    const box = sandbox();
    const bound = async (global: unknown) => {
      await box.writeJson(box.globalSettings, global);
      return firstRequestBound(box.agentDir, box.projectDir);
    };
    expect(await bound({ mcp: { servers: { a: server } } })).toEqual({
      servers: DEFAULTS.firstRequestWaitMs,
      startUp: DEFAULTS.connectTimeoutMs,
    });
    expect(await bound({ mcp: { connectTimeoutMs: 20_000, firstRequestWaitMs: 3_000, servers: { a: server } } })).toEqual({
      servers: 3_000,
      startUp: 20_000,
    });
    expect(await bound({ mcp: { connectTimeoutMs: 20_000, firstRequestWaitMs: 0, servers: { a: server } } })).toEqual({
      servers: 0,
      startUp: 0,
    });
    expect(await bound({ mcp: { connectTimeoutMs: 20_000 } })).toEqual({ servers: 0, startUp: 0 });
  });
});

describe("firstStartBound", () => {
  const start = (complete: boolean): CachedStart => ({ source: "files", servers: [], complete });

  it("is 0 in the TUI and when the known catalogs cover every server; the start-up bound (connectTimeoutMs) without them or with a partial record", async () => {
    const box = sandbox();
    await box.writeJson(box.globalSettings, {
      mcp: { firstRequestWaitMs: 4_000, connectTimeoutMs: 7_000, servers: { a: { command: "node" } } },
    });
    const print = { mode: "print" as const, hasUI: false, cwd: box.projectDir };
    expect(firstStartBound(print, undefined, box.agentDir)).toBe(7_000);
    expect(firstStartBound(print, start(false), box.agentDir)).toBe(7_000);
    expect(firstStartBound(print, start(true), box.agentDir)).toBe(0);
    expect(firstStartBound({ ...print, mode: "tui", hasUI: true }, undefined, box.agentDir)).toBe(0);
  });
});
