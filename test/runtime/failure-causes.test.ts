// Failures that explain themselves: the cause `pi-mcp test`, `/mcp status` and
// the Attention Notice show for a server that exits while connecting (exit
// code or signal, and its last stderr lines, redacted and stripped), a program
// that cannot start, an HTTP status, a network error's own code and address,
// and a connect timeout (what the server was doing, and connectTimeoutMs).
// Real processes and real loopback HTTP servers; the `test` command's core.
import { createServer, type Server } from "node:http";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { commandsFor, runCommandLine } from "../../src/commands/index.ts";
import { cliCommandEnvironment } from "../../src/commands/environment.ts";
import { formatStatus, type TestedServer } from "../../src/commands/runtime.ts";
import { createKernel, runtimeCommands } from "../../src/composition.ts";
import { attentionNotices } from "../../plugins/observer/health.ts";
import { STDERR_LINE_CHARS, STDERR_TAIL_LINES } from "../../src/runtime/explain.ts";
import { createRedactor } from "../../src/safety/text.ts";
import { freePort, nodePath } from "../helpers/servers.ts";
import { childServers, fixtureServer, killChildServers, piEnvironment, startHost, stopAllHosts } from "../helpers/host.ts";

const SECRET = "s3cr3t-Stderr-Value-77";
/** A secret that URL encoding changes (space, @, +, =, non-ASCII) but that stays inside the URL part it is written in. */
const URL_SECRET = "hunter2 p@ss+=é!";
/** Every spelling of URL_SECRET an HTTP library or a server could quote (and the parts that tell it). */
const URL_SECRET_SPELLINGS = [
  URL_SECRET,
  encodeURIComponent(URL_SECRET),
  encodeURI(URL_SECRET),
  "hunter2%20p",
  "hunter2+p",
  "p%40ss",
  "%C3%A9",
  "%c3%a9",
];
/** The server processes these tests start: `node -e …` scripts, fixtures, and programs in the test's folder. */
const STARTED = /\s-e\s|test\/fixtures\/servers|pi-mcp-causes-/;
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

let root: string;
const servers: Server[] = [];
beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "pi-mcp-causes-")));
  await mkdir(join(root, "agent"));
  await mkdir(join(root, "project"));
});
afterEach(async () => {
  await stopAllHosts();
  // Every process a test started is gone once its host stopped; one that is not fails the test, and is killed all the same.
  const left = killChildServers(STARTED);
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
  await rm(root, { recursive: true, force: true });
  expect(left).toEqual([]);
});

/** Runs `pi-mcp test --all --json` (the command core, as the CLI does) over these servers. */
async function tested(definitions: Record<string, unknown>, connectTimeoutMs = 8_000): Promise<Record<string, TestedServer>> {
  const result = await testRun(definitions, connectTimeoutMs);
  const list = (result.json as { servers: TestedServer[] } | undefined)?.servers;
  if (!list) throw new Error(`test did not run: ${result.output}`);
  return Object.fromEntries(list.map((server) => [server.name, server]));
}

/** The whole `test --all --json` result (exit code, output, JSON), also when the settings are refused. */
async function testRun(definitions: Record<string, unknown>, connectTimeoutMs = 8_000) {
  await writeFile(join(root, "agent", "settings.json"), JSON.stringify({ mcp: { connectTimeoutMs, servers: definitions } }));
  const env = { PATH: process.env.PATH ?? "", HOME: root, PI_CODING_AGENT_DIR: join(root, "agent"), CAUSE_SECRET: SECRET, URL_SECRET };
  return runCommandLine(
    commandsFor("cli", runtimeCommands()),
    ["test", "--all", "--json"],
    cliCommandEnvironment(join(root, "project"), env, async () => createKernel()),
  );
}

/** A stdio server that runs `script` with Node. */
const node = (script: string, extra: Record<string, unknown> = {}) => ({ command: nodePath(), args: ["-e", script], ...extra });

/** A loopback HTTP server that answers every request with `status`; `echo` sends back the request line and headers (as a debugging proxy's error page does). */
async function answering(status: number, echo = false): Promise<string> {
  return serving((request, response) => {
    response.statusCode = status;
    // The credentials first, on the first line (a cause quotes only that).
    const headers = Object.entries(request.headers)
      .filter(([name]) => name === "authorization" || name.startsWith("x-"))
      .map(([name, value]) => `${name}: ${String(value)}`);
    response.end(echo ? `${request.method} ${request.url} ${headers.join("; ")}\nmore lines` : "not here");
  });
}

/** A loopback HTTP server answering with `handler`; its /mcp URL. */
async function serving(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler!);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address() as { port: number };
  return `http://127.0.0.1:${address.port}/mcp`;
}

describe("a stdio server that exits while connecting", () => {
  it("is explained by its exit code and the stderr line that names the problem, not by the protocol probe", async () => {
    const missing = join(root, "server.js");
    const result = await tested({ gone: { command: nodePath(), args: [missing] } });
    expect(result.gone!.ok).toBe(false);
    expect(result.gone!.error).toMatch(
      /^the server process exited with code 1 while connecting; its last stderr lines: Error: Cannot find module '.*server\.js'/,
    );
    expect(result.gone!.error).not.toMatch(/negotiation|probe/i);
    expect(childServers(STARTED)).toEqual([]);
  });

  it("quotes at most a few stderr lines, each bounded, redacted and free of terminal controls", async () => {
    const script = [
      "for (let i = 0; i < 50; i++) console.error('noise line ' + i);",
      "console.error('\\u001b[31mFatal: token ' + process.env.TOKEN + ' was refused\\u001b[0m \\u009b2J' + 'x'.repeat(500));",
      "console.error('    at someFrame (file.js:1:1)');",
      "process.exit(3);",
    ].join("\n");
    const result = await tested({ noisy: node(script, { environment: { TOKEN: "${CAUSE_SECRET}" } }) });
    const error = result.noisy!.error!;
    expect(error).toMatch(
      /^the server process exited with code 3 while connecting; its last stderr line: Fatal: token ‹redacted› was refused/,
    );
    expect(error).not.toContain(SECRET);
    expect(error).not.toMatch(CONTROLS);
    expect(error).not.toContain("someFrame");
    const quoted = error.slice(error.indexOf(": ", error.indexOf("stderr line")) + 2).split(" | ");
    expect(quoted.length).toBeLessThanOrEqual(STDERR_TAIL_LINES);
    for (const line of quoted) expect(line.length).toBeLessThanOrEqual(STDERR_LINE_CHARS + 1);
  });

  it("names the signal that ended a process killed while connecting", async () => {
    const result = await tested({ killed: node("console.error('about to go'); process.kill(process.pid, 'SIGKILL')") });
    expect(result.killed!.error).toMatch(
      /^the server process was stopped by signal SIGKILL while connecting; its last stderr line: about to go$/,
    );
  });

  it("shows the same cause in /mcp status and in the Attention Notice", async () => {
    const h = await startHost({ gone: { command: nodePath(), args: [join(root, "server.js")] } }, { retry: { maxRetries: 0 } });
    const status = await h.waitForState("gone", "failed");
    expect(status.cause).toMatch(
      /^the server process exited with code 1 while connecting; its last stderr lines: Error: Cannot find module/,
    );
    expect(formatStatus(h.config, h.host.status()).replace(/\n {4}/g, " ")).toContain(`cause: ${status.cause!.slice(0, 60)}`);
    const [notice] = attentionNotices({ servers: new Map() }, h.config, h.host.status(), createRedactor(h.config.secrets));
    expect(notice!.text).toContain(
      `MCP server "gone" failed: the server process exited with code 1 while connecting; its last stderr lines: Error: Cannot find module`,
    );
  });

  it("a server that exits after it connected is explained the same way", async () => {
    const h = await startHost({ crash: fixtureServer("crash") }, { retry: { maxRetries: 0 } });
    await h.waitForTools(2, { server: "crash" });
    await h.call("mcp__crash__crash").catch(() => undefined);
    const status = await h.waitForState("crash", "failed");
    expect(status.cause).toMatch(/^the connection closed unexpectedly: the server process exited with code 1/);
  });
});

describe("a program that cannot be started", () => {
  it("says which program, and why", async () => {
    const result = await tested({ absent: { command: join(root, "no-such-server") } });
    expect(result.absent!.error).toBe(
      `could not start ${JSON.stringify(join(root, "no-such-server"))}: no such program or folder (ENOENT)`,
    );
  });
});

describe("remote servers", () => {
  it("a refused HTTP request shows the status code the server answered", async () => {
    const result = await tested({
      missing: { url: await answering(404) },
      broken: { url: await answering(500) },
      sse: { url: await answering(404), transport: "sse" },
    });
    expect(result.missing!.error).toMatch(/^the server answered HTTP 404 Not Found/);
    expect(result.broken!.error).toMatch(/^the server answered HTTP 500 Internal Server Error/);
    expect(result.sse!.error).toMatch(/^the server answered HTTP 404 Not Found/);
  });

  it("a network failure shows the error's own code and address instead of `fetch failed`", async () => {
    const port = await freePort();
    const result = await tested({
      http: { url: `http://127.0.0.1:${port}/mcp` },
      sse: { url: `http://127.0.0.1:${port}/sse`, transport: "sse" },
      blocked: { url: "http://127.0.0.1:1/mcp" },
    });
    expect(result.http!.error).toBe(`could not reach 127.0.0.1:${port}: ECONNREFUSED 127.0.0.1:${port}`);
    expect(result.sse!.error).toBe(`could not reach 127.0.0.1:${port}: ECONNREFUSED 127.0.0.1:${port}`);
    expect(result.blocked!.error).toMatch(/^could not reach 127\.0\.0\.1:1: fetch refuses this port/);
    for (const server of Object.values(result)) expect(server.error).not.toContain("fetch failed");
  });
});

describe("a connect timeout", () => {
  it("says what the server was doing last and that connectTimeoutMs raises the limit", async () => {
    const script =
      "console.error('npm WARN exec The following package was not found and will be installed: @acme/slow-server'); setInterval(() => {}, 1000)";
    const result = await tested({ slow: node(script) }, 600);
    expect(result.slow!.error).toBe(
      "connecting took longer than 600 ms (connectTimeoutMs) while waiting for the server process to answer the protocol handshake; " +
        "its last stderr line: npm WARN exec The following package was not found and will be installed: @acme/slow-server. " +
        "A server that needs longer to start (a first `npx -y` run downloads its package) needs a higher connectTimeoutMs in its definition",
    );
    expect(childServers(STARTED)).toEqual([]);
  });
});

describe("/mcp logs", () => {
  it("separates connection attempts with a line carrying the attempt number and a time", async () => {
    const before = Date.now();
    const h = await startHost(
      { flaky: node("console.error('starting, pid ' + process.pid); process.exit(2)") },
      { retry: { maxRetries: 2, initialDelayMs: 20 } },
    );
    await h.waitForState("flaky", "failed");
    const logs = h.host.kernelInstance.commands.find((command) => command.name === "logs")!;
    const { output } = await logs.run({ positionals: ["flaky"], options: {}, rest: undefined }, piEnvironment(h));
    const attempts = [...output.matchAll(/^\[pi-mcp\] ── connection attempt (\d+) at (\S+) ──$/gm)];
    expect(attempts.map((match) => Number(match[1]))).toEqual([1, 2, 3]);
    for (const [, , time] of attempts) {
      expect(Date.parse(time!)).toBeGreaterThanOrEqual(before - 1_000);
      expect(Date.parse(time!)).toBeLessThanOrEqual(Date.now());
    }
    // Each attempt's own stderr follows its separator.
    const sections = output.split(/^\[pi-mcp\] ── connection attempt \d+ at \S+ ──$/m).slice(1);
    expect(sections).toHaveLength(3);
    for (const section of sections) expect(section).toMatch(/starting, pid \d+/);
  });
});

describe("secrets in causes", () => {
  it("a resolved value is redacted in every percent-encoded form a URL gives it (user info, path, query), also when a server echoes the request", async () => {
    const echoing = await answering(404, true);
    // One server per run: a run's redactor knows only its own settings' values.
    const causes = [
      (await tested({ path: { url: `${echoing}/\${URL_SECRET}`, auth: { type: "none" } } })).path!.error!,
      (await tested({ query: { url: `${echoing}?key=\${URL_SECRET}`, auth: { type: "none" } } })).query!.error!,
    ];
    expect(causes[0]).toMatch(/^the server answered HTTP 404 Not Found \(.*POST \/mcp\/‹redacted› /);
    expect(causes[1]).toMatch(/^the server answered HTTP 404 Not Found \(.*POST \/mcp\?key=‹redacted› /);
    // Credentials in a URL's user info are refused as settings (fetch never sends them); the refusal quotes no form of them.
    const userinfo = await testRun({
      userinfo: { url: `http://user:\${URL_SECRET}@127.0.0.1:${await freePort()}/mcp`, auth: { type: "none" } },
    });
    expect(userinfo.exitCode).not.toBe(0);
    expect(userinfo.output).toContain("mcp.servers.userinfo.url: must not hold user:password@");
    causes.push(userinfo.output);
    for (const cause of causes) for (const spelling of URL_SECRET_SPELLINGS) expect(cause).not.toContain(spelling);
  });

  it("credentials written literally (a header value, the token after its scheme, a URL's password) are redacted like expanded ones", async () => {
    const echoing = await answering(404, true);
    const result = await tested({
      header: {
        url: echoing,
        headers: { Authorization: "Bearer literal-token-xyz", "X-Api-Key": "literal-key-123" },
        auth: { type: "none" },
      },
    });
    expect(result.header!.error).toMatch(/^the server answered HTTP 404/);
    // Values HTTP cannot send are refused as settings, named by path, never quoted.
    const refused = await testRun({
      broken: { url: echoing, headers: { "X-Key": "literal-secret\nInjected: 1" }, auth: { type: "none" } },
      password: { url: `http://user:literal%20pw%40x@127.0.0.1:${await freePort()}/mcp`, auth: { type: "none" } },
    });
    expect(refused.output).toContain("mcp.servers.broken.headers.X-Key: must not contain a line break or NUL (U+000A)");
    expect(refused.output).toContain("mcp.servers.password.url: must not hold user:password@");
    const text = JSON.stringify(result) + refused.output;
    for (const literal of ["literal-token-xyz", "literal-key-123", "literal-secret", "literal%20pw%40x", "literal pw@x"])
      expect(text).not.toContain(literal);
    expect(result.header!.error).toContain("‹redacted›");
  });

  it("the stderr tail and the retained log never quote the half of a secret a server had written when its attempt failed", async () => {
    // Half the secret on stderr, no newline; initialize refused; the rest never comes (the process is closed first).
    const script = [
      "const s = process.env.S; process.stderr.write('stderr-start ' + s.slice(0, 11));",
      "process.stdin.on('data', (d) => { for (const line of String(d).split('\\n').filter(Boolean)) { const m = JSON.parse(line);",
      "  if (m.method === 'initialize') process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, error: { code: -32603, message: 'init refused' } }) + '\\n'); } });",
      "process.stdin.on('end', () => process.exit(0));",
    ].join("\n");
    const h = await startHost(
      { split: node(script, { environment: { S: "${CAUSE_SECRET}" } }) },
      { retry: { maxRetries: 1, initialDelayMs: 20 }, env: { ...process.env, CAUSE_SECRET: SECRET } },
    );
    const status = await h.waitForState("split", "failed");
    expect(status.cause).toContain("init refused");
    expect(status.cause).not.toContain(SECRET.slice(0, 4));
    const logs = h.host.kernelInstance.commands.find((command) => command.name === "logs")!;
    const { output } = await logs.run({ positionals: ["split"], options: {}, rest: undefined }, piEnvironment(h));
    expect(output).not.toContain(SECRET.slice(0, 4));
    // The unfinished line is ended (shown redacted) when its process closes, and the next attempt's separator starts a line of its own.
    expect(output).toMatch(/^stderr-start ‹redacted›\n\[pi-mcp\] ── connection attempt 2 /m);
  });

  it("a secret whose halves arrive in separate stderr writes is redacted whole in the log", async () => {
    const script = [
      "const s = process.env.S; process.stderr.write('first ' + s.slice(0, 9));",
      "setImmediate(() => process.stderr.write(s.slice(9) + ' rest\\n', () => process.exit(4)));",
    ].join("\n");
    const h = await startHost(
      { halves: node(script, { environment: { S: "${CAUSE_SECRET}" } }) },
      { retry: { maxRetries: 0 }, env: { ...process.env, CAUSE_SECRET: SECRET } },
    );
    const status = await h.waitForState("halves", "failed");
    expect(status.cause).toMatch(/exited with code 4 while connecting; its last stderr line: first ‹redacted› rest$/);
    const logs = h.host.kernelInstance.commands.find((command) => command.name === "logs")!;
    const { output } = await logs.run({ positionals: ["halves"], options: {}, rest: undefined }, piEnvironment(h));
    expect(output).toContain("first ‹redacted› rest\n");
  });
});

describe("causes in plain words, without the protocol probe's jargon", () => {
  it("header names and values HTTP cannot send are settings problems naming the header", async () => {
    const refused = await testRun({
      badname: { url: "http://127.0.0.1:9/mcp", headers: { "X Bad Name": "x" }, auth: { type: "none" } },
      euro: { url: "http://127.0.0.1:9/mcp", headers: { "X-Key": "tok€n" }, auth: { type: "none" } },
    });
    expect(refused.exitCode).not.toBe(0);
    expect(refused.output).toContain('mcp.servers.badname.headers["X Bad Name"]: is not a valid HTTP header name');
    expect(refused.output).toContain("mcp.servers.euro.headers.X-Key: holds a character an HTTP header cannot carry (U+20AC");
    expect(refused.output).not.toContain("tok€n");
  });

  it("an unusable reply, a 2xx that is not an event stream, a TLS URL on a plain port and an HTML error page each read as what happened", async () => {
    const html = `<!DOCTYPE html>\n<html><head><title>Sign in</title></head>\n<body>${"x".repeat(2_000)}</body></html>`;
    const url = await serving((request, response) => {
      if (request.url === "/garbage") return response.writeHead(200, { "content-type": "application/json" }).end("not json at all");
      if (request.url === "/sse-html")
        return response.writeHead(200, { "content-type": "text/html" }).end("<html><body>Login</body></html>");
      response.writeHead(404, { "content-type": "text/html" }).end(html);
    });
    const base = url.replace(/\/mcp$/, "");
    const result = await tested({
      garbage: { url: `${base}/garbage`, auth: { type: "none" } },
      sseHtml: { url: `${base}/sse-html`, transport: "sse", auth: { type: "none" } },
      tls: { url: `${base.replace("http:", "https:")}/mcp`, auth: { type: "none" } },
      page: { url, auth: { type: "none" } },
    });
    for (const server of Object.values(result)) {
      expect(server.error).not.toMatch(/negotiation|probe/i);
      expect(server.error).not.toContain("\n");
      expect(server.error!.length).toBeLessThan(600);
    }
    expect(result.garbage!.error).toMatch(/^the server answered with an unusable reply/);
    expect(result.sseHtml!.error).not.toMatch(/HTTP 200/);
    expect(result.sseHtml!.error).toMatch(
      /^the URL answered, but not with an event stream \(.*content type.*\): is it the server's SSE endpoint\?$/,
    );
    expect(result.tls!.error).toMatch(/the TLS handshake failed \(ERR_SSL_[A-Z_]+\): is it a plain http:\/\/ server\?/);
    expect(result.page!.error).toMatch(/^the server answered HTTP 404 Not Found \(.*\(an HTML page\)\)/);
    expect(result.page!.error).not.toContain("xxxx");
  });
});
