// OAuth discovery reads what an untrusted server sends like every other
// message: a document (protected-resource or authorization-server metadata)
// of at most the 16 MiB message cap, and each OAuth request within the
// server's connect timeout. A fixture whose documents never end (a flood, or
// one byte every 100 ms) for a connection (Pi's background connect) and for
// `auth` (the explicit flow).
import { afterEach, describe, expect, it } from "vitest";
import { MAX_MESSAGE_BYTES } from "../../src/kernel/limits.ts";
import { startHttpFixture, type RunningServer } from "../helpers/servers.ts";
import { runCommand, useOAuthScene } from "./helpers.ts";

const MiB = 1024 * 1024;
const scene = useOAuthScene();
const servers: RunningServer[] = [];
afterEach(async () => {
  await Promise.allSettled(servers.splice(0).map((server) => server.stop()));
});

interface EndlessStats {
  readonly sent: number;
  readonly requests: number;
  readonly closed: number;
}

async function endlessServer(
  where: "prm" | "asm",
  mode: "flood" | "drip",
): Promise<{ server: RunningServer; stats: () => Promise<EndlessStats> }> {
  const server = await startHttpFixture("oauth-endless", [where, mode]);
  servers.push(server);
  return { server, stats: async () => (await (await fetch(`${server.baseUrl}/stats`)).json()) as EndlessStats };
}

/** The cap plus what sockets buffer between the fixture and the reader (a client without a cap reads the whole 256 MiB flood). */
const CAPPED_READ = MAX_MESSAGE_BYTES + 16 * MiB;

/** Each endless document was read no further than the cap (discovery asks at several well-known locations, one after the other). */
function expectEachReadCapped(stats: EndlessStats): void {
  expect(stats.requests).toBeGreaterThan(0);
  expect(stats.requests).toBeLessThan(10);
  expect(stats.sent / stats.requests).toBeLessThan(CAPPED_READ);
}

describe("OAuth discovery is bounded like every message", () => {
  for (const where of ["prm", "asm"] as const) {
    const document = where === "prm" ? "protected-resource metadata" : "authorization-server metadata";

    it(`a connection whose server's ${document} never ends stops reading it at the 16 MiB cap (an unreadable protected-resource document counts as none: needs_auth; authorization-server metadata: failed, naming the limit)`, async () => {
      const endless = await endlessServer(where, "flood");
      await scene.sandbox(endless.server.url, () => ({ type: "oauth", redirectUri: "http://127.0.0.1:1/cb" }));
      const h = await scene.host();
      await h.waitFor("remote", ["needs_auth", "failed"], 60_000);
      expectEachReadCapped(await endless.stats());
      // Protected-resource metadata is optional: the SDK goes on without an unreadable one (the server's origin is its authorization server).
      if (where === "prm") expect(h.state("remote")).toBe("needs_auth");
      else expect(h.cause("remote")).toBe("the server sent a message larger than the 16 MiB message-size limit (HTTP response)");
    }, 90_000);

    it(`\`auth\` against a server whose ${document} never ends fails having read no more than the cap (naming the limit for authorization-server metadata)`, async () => {
      const endless = await endlessServer(where, "flood");
      await scene.sandbox(endless.server.url, () => ({ type: "oauth", redirectUri: "http://127.0.0.1:1/cb" }));
      const result = await runCommand(scene.box, ["auth", "remote", "--no-open"]);
      expect(result.exitCode).not.toBe(0);
      if (where === "asm") expect(result.output).toContain("the server sent a message larger than the 16 MiB message-size limit");
      expectEachReadCapped(await endless.stats());
    }, 90_000);

    it(`a connection whose server sends its ${document} one byte every 100 ms ends within the connect timeout and leaves no request open`, async () => {
      const endless = await endlessServer(where, "drip");
      await scene.sandbox(endless.server.url, () => ({ type: "oauth", redirectUri: "http://127.0.0.1:1/cb" }));
      const started = Date.now();
      const h = await scene.host();
      await h.waitFor("remote", ["needs_auth", "failed"], 30_000);
      // The sandbox's connectTimeoutMs is 5,000 ms.
      expect(Date.now() - started).toBeLessThan(15_000);
      expect((await endless.stats()).requests).toBeGreaterThan(0);
      await expect
        .poll(
          async () => {
            const stats = await endless.stats();
            return stats.requests - stats.closed;
          },
          { timeout: 15_000 },
        )
        .toBe(0);
    }, 60_000);

    it(`\`auth\` against a server that sends its ${document} one byte every 100 ms gives up after the connect timeout and closes the request (naming the timeout for authorization-server metadata)`, async () => {
      const endless = await endlessServer(where, "drip");
      await scene.sandbox(endless.server.url, () => ({ type: "oauth", redirectUri: "http://127.0.0.1:1/cb" }));
      const started = Date.now();
      const result = await runCommand(scene.box, ["auth", "remote", "--no-open"]);
      // The sandbox's connectTimeoutMs is 5,000 ms: one OAuth request may take that long, and the flow makes few.
      expect(Date.now() - started).toBeLessThan(20_000);
      expect(result.exitCode).not.toBe(0);
      if (where === "asm")
        expect(result.output).toMatch(/a request to http:\/\/127\.0\.0\.1:\d+ took longer than 5000 ms \(connectTimeoutMs\)/);
      const stats = await endless.stats();
      expect(stats.requests).toBeGreaterThan(0);
      await expect.poll(async () => (await endless.stats()).closed, { timeout: 10_000 }).toBe((await endless.stats()).requests);
    }, 60_000);
  }
});
