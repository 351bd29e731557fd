// A connect attempt its connection has moved on from (closed while the attempt set up its transport) starts nothing.
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterEach, expect, it } from "vitest";
import { createKernel } from "../../src/composition.ts";
import { STAGE } from "../../src/lib.ts";
import { fixtureServer, startHost, stopAllHosts, until } from "../helpers/host.ts";

afterEach(stopAllHosts);

it("a connection closed while its attempt's transport is being set up creates no client, starts no process, and closes that transport", async () => {
  const kernel = createKernel();
  let release = () => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  let entered = () => {};
  const inHook = new Promise<void>((resolve) => (entered = resolve));
  const seen = { clients: 0, started: 0, closed: 0 };
  // A transport plugin that holds the attempt until the test lets it go, and counts what is done with its transport.
  kernel.hooks.createTransport.tapPromise({ name: "test-held-transport", stage: STAGE.BEFORE_BUILTIN }, async (context) => {
    const definition = context.server.definition;
    if (definition?.transport !== "stdio") return undefined;
    entered();
    await gate;
    const transport = new StdioClientTransport({ command: definition.command, args: [...definition.args], stderr: "pipe" });
    const start = transport.start.bind(transport);
    transport.start = () => {
      seen.started++;
      return start();
    };
    const close = transport.close.bind(transport);
    transport.close = () => {
      seen.closed++;
      return close();
    };
    return { transport };
  });
  kernel.hooks.clientCreated.tap({ name: "test-client-spy", stage: STAGE.BEFORE_BUILTIN }, () => {
    seen.clients++;
  });
  const h = await startHost({ held: fixtureServer("basic") }, { kernel, retry: { maxRetries: 0 } });
  await inHook;
  const connection = h.host.server("held")!;
  await connection.close();
  release();
  await until(
    () => seen.closed > 0,
    10_000,
    () => `the held transport was never closed (${JSON.stringify(seen)})`,
  );
  expect(seen).toEqual({ clients: 0, started: 0, closed: 1 });
  expect(connection.state).toBe("disabled");
  expect(connection.processId).toBeUndefined();
});
