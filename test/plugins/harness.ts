/**
 * In-process plugin tests: a kernel holding the plugin under test (and only
 * what the test names besides), a real McpHost, and fixture servers built
 * with @modelcontextprotocol/server in this process, each reached over the
 * SDK's in-memory linked transport pair (`InMemoryTransport.createLinkedPair`).
 * No process is started: a plugin's contract with servers and with Pi's
 * services is read from its test. The real-process tests (test/features,
 * test/e2e) stay beside these.
 *
 *   const h = await pluginHost([new PromptsPlugin()], { docs: { build: (server) => server.registerPrompt(...) } });
 *   await h.waitForState("docs", "connected");
 *   await h.command("prompt docs review --arg file=a.ts");
 *   h.server("docs").received  // what the host sent the server
 */
import { InMemoryTransport, type JSONRPCMessage } from "@modelcontextprotocol/client";
import { McpServer, type ServerOptions } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { runCommandLine } from "../../src/commands/index.ts";
import { runtimeCommands } from "../../src/composition.ts";
import type { CommandResult } from "../../src/kernel/commands.ts";
import type { TransportContext } from "../../src/kernel/types.ts";
import { Kernel, STAGE, type KernelConstruction, type KernelPlugin } from "../../src/kernel/kernel.ts";
import { piEnvironment, startHost, type StartHostOptions, type TestHost } from "../helpers/host.ts";
import { fakeServices, type FakeServices } from "../helpers/services.ts";
import { eventWaiter } from "../helpers/wait.ts";

export { stopAllHosts } from "../helpers/host.ts";

export interface FixtureServer {
  /** Adds the server's tools, resources and prompts; called for every server instance (each connection gets its own). */
  readonly build: (server: McpServer) => void;
  /** `modern` (default): both eras served, so the host negotiates 2026-07-28; `legacy`: a 2025-era server only. */
  readonly era?: "modern" | "legacy";
  /** The server's own options (capabilities, instructions). */
  readonly options?: ServerOptions;
  /**
   * More of the server's settings (`roots`, `requestTimeoutMs`, ...), as settings.json has them. With a `url`
   * the definition is a remote one (its `auth`, `headers`), still reached over the in-memory pair.
   */
  readonly settings?: Record<string, unknown>;
}

/** One fixture server as the test sees it. */
export interface LinkedServer {
  /** Every message the host sent this server (requests and notifications), oldest first, over all its connections. */
  readonly received: JSONRPCMessage[];
  /** The methods of `received`, in order. */
  methods(): string[];
  /** The params of every request or notification of `method` the host sent, in order. */
  params(method: string): Record<string, any>[];
  /** The client capabilities the host declared in `initialize` (2025 era; undefined before or without one). */
  initializeCapabilities(): Record<string, unknown> | undefined;
  /** The server instance of the live connection (the one the host talks to now). */
  instance(): McpServer;
  /** How many connections the host opened to it. */
  readonly connections: number;
  /** What each of its connections asked the transport plugins for, oldest first: `auth` is what the auth plugins supplied. */
  readonly transports: readonly TransportContext[];
}

export interface PluginTestHost extends TestHost {
  /** The host's kernel: the plugins under test and the in-memory transport. */
  readonly kernel: Kernel;
  server(name: string): LinkedServer;
  /** Runs a `/mcp` command line (the runtime's commands and the kernel's plugins' commands) against this host. */
  command(line: string): Promise<CommandResult>;
}

/** A remote server (`url`, and `settings` such as `auth` and `headers`) with nothing to offer, reached over the in-memory pair all the same. */
export function remoteFixture(settings: Record<string, unknown> = {}): FixtureServer {
  return { build: () => {}, settings: { url: "https://mcp.example.test/mcp", ...settings } };
}

/** The test's transport plugin's name (not an internal plugin). */
export const MEMORY_TRANSPORT = "test-memory-transport";

/**
 * A host whose kernel holds `plugins` and the in-memory transport, connected
 * to `servers` (each a stdio-shaped definition, or a remote one when its
 * settings have a `url`, which the in-memory transport takes before any
 * other). Stop it with `stop()`, or every host still running
 * with `stopAllHosts()` (in afterEach).
 */
export async function pluginHost(
  plugins: readonly KernelPlugin[],
  servers: Record<string, FixtureServer>,
  options: Omit<StartHostOptions, "kernel"> & KernelConstruction = {},
): Promise<PluginTestHost> {
  const linked = new Map<string, LinkedServer & { connections: number; instances: McpServer[]; transports: TransportContext[] }>();
  for (const name of Object.keys(servers)) {
    const received: JSONRPCMessage[] = [];
    const instances: McpServer[] = [];
    linked.set(name, {
      received,
      instances,
      connections: 0,
      transports: [],
      methods: () => received.flatMap((message) => ("method" in message ? [message.method] : [])),
      params: (method) =>
        received.flatMap((message) =>
          "method" in message && message.method === method ? [(message.params ?? {}) as Record<string, any>] : [],
        ),
      initializeCapabilities() {
        return this.params("initialize")[0]?.capabilities;
      },
      instance() {
        const live = instances.filter((instance) => instance.isConnected()).at(-1);
        if (!live) throw new Error(`fixture server "${name}" has no live connection`);
        return live;
      },
    });
  }
  const memory: KernelPlugin = {
    name: MEMORY_TRANSPORT,
    apply(kernel) {
      kernel.hooks.createTransport.tapPromise({ name: MEMORY_TRANSPORT, stage: STAGE.BEFORE_BUILTIN }, async (context) => {
        const fixture = servers[context.server.name];
        const record = linked.get(context.server.name);
        if (!fixture || !record) return undefined;
        record.connections++;
        record.transports.push(context);
        const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
        const send = clientSide.send.bind(clientSide);
        clientSide.send = (message, sendOptions) => {
          record.received.push(message);
          return send(message, sendOptions);
        };
        const create = () => {
          const server = new McpServer({ name: `fixture-${context.server.name}`, version: "1.0.0" }, fixture.options);
          fixture.build(server);
          record.instances.push(server);
          return server;
        };
        if (fixture.era === "legacy") await create().connect(serverSide);
        else serveStdio(create, { transport: serverSide });
        return { transport: clientSide };
      });
    },
  };
  const definitions = Object.fromEntries(
    Object.entries(servers).map(([name, fixture]) => [
      name,
      { ...(fixture.settings?.url === undefined && { command: "in-memory" }), ...fixture.settings },
    ]),
  );
  const kernel = new Kernel([memory, ...plugins], options);
  const host = await startHost(definitions, { ...options, kernel });
  const environment = piEnvironment(host);
  return Object.assign(host, {
    kernel,
    server(name: string): LinkedServer {
      const found = linked.get(name);
      if (!found) throw new Error(`no fixture server "${name}"`);
      return found;
    },
    command: (line: string) => runCommandLine([...runtimeCommands(), ...kernel.commands], line.split(" "), environment),
  });
}

/** Pi's services as in-memory stand-ins (helpers/services.ts), whose every use is an event `until` waits on. */
export interface WatchedServices extends FakeServices {
  /** Resolves once `condition` holds, re-checked whenever a plugin used a service; rejects with `describe()` after `timeoutMs`. */
  until(condition: () => boolean, describe: () => string, timeoutMs?: number): Promise<void>;
}

export function watchedServices(): WatchedServices {
  const services = fakeServices();
  const changes = eventWaiter();
  const after =
    <A extends unknown[], R>(fn: (...args: A) => R) =>
    (...args: A): R => {
      const result = fn(...args);
      changes.notify();
      return result;
    };
  const { session, piTools } = services;
  Object.assign(session, { append: after(session.append), queueMessage: after(session.queueMessage) });
  Object.assign(piTools, { define: after(piTools.define), setActive: after(piTools.setActive) });
  return Object.assign(services, {
    until: (condition: () => boolean, describe: () => string, timeoutMs = 10_000) => changes.until(condition, timeoutMs, describe),
  });
}
