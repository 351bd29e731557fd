// A stdio server's work turns on no async context tracking in the host's
// process. An AsyncLocalStorage scope, once entered, makes Node track the
// context of every promise the process creates from then on (Pi's included):
// about 90 ns each, 0.2–0.5 ms of CPU per agent turn in a real Pi. The SDK
// prints only from its HTTP and OAuth code, so only remote servers' work is
// scoped (see test/faults/sdk-console.test.ts for where that output goes).
import { AsyncLocalStorage } from "node:async_hooks";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { fixtureServer, startHost, stopAllHosts, textOf } from "../helpers/host.ts";
import { startHttpFixture, type RunningServer } from "../helpers/servers.ts";

/** Every stack that entered an AsyncLocalStorage scope from pi-mcp's own code while the test ran. */
let scopes: string[] = [];
let server: RunningServer | undefined;

beforeEach(() => {
  scopes = [];
  const record = (): void => {
    const stack = new Error("scope entered").stack ?? "";
    if (/[\\/](src|plugins)[\\/]/.test(stack)) scopes.push(stack);
  };
  for (const method of ["run", "enterWith"] as const) {
    const original = AsyncLocalStorage.prototype[method] as (...args: unknown[]) => unknown;
    vi.spyOn(AsyncLocalStorage.prototype, method).mockImplementation(function (this: AsyncLocalStorage<unknown>, ...args: unknown[]) {
      record();
      return original.apply(this, args);
    } as never);
  }
});

afterEach(async () => {
  vi.restoreAllMocks();
  await stopAllHosts();
  await server?.stop();
  server = undefined;
});

it("connecting to a stdio server and calling its tools enters no async context scope", async () => {
  const h = await startHost({ local: fixtureServer("basic") });
  await h.waitForState("local", "connected");
  for (const text of ["one", "two", "three"]) expect(textOf(await h.call("mcp__local__echo", { text }))).toBe(text);
  expect(scopes).toEqual([]);
});

it("a remote server's work is scoped (the spy sees a scope where one is entered)", async () => {
  server = await startHttpFixture("http-basic");
  const h = await startHost({ remote: { url: server.url } });
  await h.waitForTools(2, { server: "remote" });
  expect(textOf(await h.call("mcp__remote__echo", { text: "over http" }))).toBe("over http");
  expect(scopes.length).toBeGreaterThan(0);
});
