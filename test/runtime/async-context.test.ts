// No server's work turns on async context tracking in the host's process. An
// AsyncLocalStorage scope, once entered, makes Node track the context of every
// promise the process creates from then on (Pi's included): about 90 ns each,
// 0.2–0.5 ms of CPU per agent turn in a real Pi. Where the SDK's console output
// goes is found from async stacks instead (test/safety/sdk-output.test.ts,
// test/faults/sdk-console.test.ts), and which request an oversized HTTP body
// belongs to from the request itself (test/faults/limits.test.ts).
import { AsyncLocalStorage } from "node:async_hooks";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { fixtureServer, startHost, stopAllHosts, textOf } from "../helpers/host.ts";
import { startHttpFixture, type RunningServer } from "../helpers/servers.ts";

/** The stack of every AsyncLocalStorage scope entered while the test ran. */
let scopes: string[] = [];
/** Those entered from pi-mcp's own code. */
const ours = () => scopes.filter((stack) => /[\\/](src|plugins)[\\/]/.test(stack));
let server: RunningServer | undefined;

beforeEach(() => {
  scopes = [];
  const record = (): void => {
    scopes.push(new Error("scope entered").stack ?? "");
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
  expect(ours()).toEqual([]);
});

it("connecting to a Streamable HTTP server (with the OAuth provider every remote server gets) and calling its tools enters none either", async () => {
  server = await startHttpFixture("http-basic");
  const h = await startHost({ remote: { url: server.url } });
  await h.waitForTools(2, { server: "remote" });
  expect(textOf(await h.call("mcp__remote__echo", { text: "over http" }))).toBe("over http");
  expect(ours()).toEqual([]);
});

it("the spy sees a scope where one is entered", () => {
  new AsyncLocalStorage<number>().run(1, () => undefined);
  expect(scopes).toHaveLength(1);
});
