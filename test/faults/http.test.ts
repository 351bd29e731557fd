// HTTP faults through OUR host with real processes and sockets: a server
// restarted (its sessions gone), sockets closed mid-response, and servers that
// accept and never answer (at connect, and for one call).
import { spawn, type ChildProcess } from "node:child_process";
import { createServer, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { fixtureServer, startHost, stopAllHosts, textOf } from "../helpers/host.ts";
import { fixturePath, freePort, nodePath, startHttpFixture, type RunningServer } from "../helpers/servers.ts";
import { expectBystanderWorks, rejectsWithin } from "./_shared.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await stopAllHosts();
  await Promise.allSettled(cleanups.splice(0).map((cleanup) => cleanup()));
});

const bystander = fixtureServer("basic");

/** http-basic on a fixed port (so it can be restarted there); resolves once it listens. */
async function httpBasicOn(port: number): Promise<ChildProcess> {
  const child = spawn(nodePath(), [fixturePath("http-basic"), String(port)], { stdio: ["pipe", "pipe", "pipe"] });
  cleanups.push(async () => void child.kill("SIGKILL"));
  await new Promise<void>((resolve, reject) => {
    let seen = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes("LISTENING")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`http-basic exited (${code}) before listening`)));
  });
  return child;
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await exited;
}

describe("an HTTP server restarted", () => {
  it("fails calls clearly while it is down, and once it is back (its sessions gone) the host reconnects and calls work again", async () => {
    const port = await freePort();
    let server = await httpBasicOn(port);
    const h = await startHost(
      { remote: { url: `http://127.0.0.1:${port}/mcp` }, bystander },
      { requestTimeoutMs: 5_000, retry: { maxRetries: 5, initialDelayMs: 200, maxDelayMs: 500 } },
    );
    await h.waitForTools(2, { server: "remote" });
    await h.waitForTools(3, { server: "bystander" });
    expect(textOf(await h.call("mcp__remote__echo", { text: "before" }))).toBe("before");

    await kill(server);
    const down = await rejectsWithin(h.call("mcp__remote__echo", { text: "down" }), 6_000);
    expect(down.message).toMatch(/^remote\/echo (failed|timed out)|is not connected/);
    await expectBystanderWorks(h);

    server = await httpBasicOn(port);
    // The old session id means nothing to the new process: once the host is connected again
    // (a pending retry has run), the next call gets a new session by itself.
    await h.waitForState("remote", "connected", 15_000);
    expect(textOf(await h.call("mcp__remote__echo", { text: "after" }))).toBe("after");
    expect(h.status("remote").state).toBe("connected");
    expect(textOf(await h.call("mcp__remote__echo", { text: "again" }))).toBe("again");
    await expectBystanderWorks(h);
  }, 30_000);
});

describe("sockets closed mid-response", () => {
  it.each(["json", "sse"])("fails the call with an error when a %s response is cut off, and the next call works", async (mode) => {
    const server: RunningServer = await startHttpFixture("http-faults");
    cleanups.push(() => server.stop());
    const h = await startHost({ remote: { url: server.url }, bystander }, { requestTimeoutMs: 5_000 });
    await h.waitForTools(4, { server: "remote" });
    await h.waitForTools(3, { server: "bystander" });
    const error = await rejectsWithin(h.call("mcp__remote__cut", { mode }), 6_000);
    expect(error.message).toMatch(/^remote\/cut (failed|timed out)/);
    expect(textOf(await h.call("mcp__remote__echo", { text: "next" }))).toBe("next");
    await expectBystanderWorks(h);
  });
});

describe("a server that accepts and never answers", () => {
  it("at connect: the attempt ends at connectTimeoutMs, retries stay bounded, the others are never held up", async () => {
    const sockets = new Set<Socket>();
    const silent: Server = createServer((socket) => {
      sockets.add(socket); // accepted, never read from or written to
      socket.on("close", () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    cleanups.push(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    });
    const port = (silent.address() as { port: number }).port;
    const h = await startHost(
      { silent: { url: `http://127.0.0.1:${port}/mcp`, connectTimeoutMs: 700 }, bystander },
      { retry: { maxRetries: 1, initialDelayMs: 100 } },
    );
    await h.waitForTools(3, { server: "bystander", timeoutMs: 30_000 });
    await expectBystanderWorks(h);
    const status = await h.waitForState("silent", "failed", 30_000);
    expect(status.attempts).toBe(2);
    expect(status.cause).toMatch(/700 ms/);
    await expectBystanderWorks(h);
  });

  it("for one call: that call times out with an error naming server, tool and limit; others on the same server go on", async () => {
    const server: RunningServer = await startHttpFixture("http-faults");
    cleanups.push(() => server.stop());
    const h = await startHost({ remote: { url: server.url, requestTimeoutMs: 1_000 }, bystander });
    await h.waitForTools(4, { server: "remote" });
    const never = h.call("mcp__remote__never");
    expect(textOf(await h.call("mcp__remote__echo", { text: "meanwhile" }))).toBe("meanwhile");
    const error = await rejectsWithin(never, 4_000);
    expect(error.message).toBe("remote/never timed out after 1000 ms");
    expect(textOf(await h.call("mcp__remote__echo", { text: "after" }))).toBe("after");
    await expectBystanderWorks(h);
  });
});
