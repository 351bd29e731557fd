// Where the MCP SDK's console output goes: to the sink of the work it happened
// in, found from the printing call's async stack, also across awaits and
// between concurrent pieces of work; nowhere when no work claims it. A stand-in
// for the SDK's code is written under a `@modelcontextprotocol/client` path,
// which is how the console patch tells the SDK's calls from everyone else's.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { captureSdkConsole, withSdkOutput } from "../../src/safety/sdk-output.ts";
import { nodeBinary, REPO_ROOT, runProcess } from "../helpers/tmp.ts";

interface FakeSdk {
  /** Waits `ms` (a timer, several awaits deep), then prints `text` with console.warn. */
  warnLater(text: string, ms: number): Promise<void>;
  /** Prints `text` from a timer callback that no work awaits. */
  warnDetached(text: string, ms: number): Promise<void>;
}

let folder: string;
let sdk: FakeSdk;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "pi-mcp-sdk-output-"));
  const dir = join(folder, "node_modules", "@modelcontextprotocol", "client");
  await mkdir(dir, { recursive: true });
  const source = `
    const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
    async function deeper(text, ms) { await sleep(ms); await null; console.warn("[mcp-sdk] " + text); }
    export async function warnLater(text, ms) { await sleep(1); await deeper(text, ms); }
    export function warnDetached(text, ms) { setTimeout(() => console.warn("[mcp-sdk] " + text), ms); return sleep(ms * 3); }
  `;
  await writeFile(join(dir, "fake.mjs"), source);
  sdk = (await import(pathToFileURL(join(dir, "fake.mjs")).href)) as FakeSdk;
  captureSdkConsole();
});

afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

function recorder(): { lines: string[]; sink: (line: string) => void } {
  const lines: string[] = [];
  return { lines, sink: (line) => lines.push(line) };
}

/** The scopes with work pending, as the shared state holds them. */
function activeScopes(): number {
  const state = (globalThis as Record<symbol, { active: Map<number, unknown> } | undefined>)[Symbol.for("pi-mcp.sdk-output.v2")];
  return state?.active.size ?? 0;
}

describe("the SDK's console output", () => {
  it("goes to the sink of the work it happened in, across awaits and timers, also when two pieces of work overlap", async () => {
    const a = recorder();
    const b = recorder();
    await Promise.all([
      withSdkOutput(a.sink, () => sdk.warnLater("from a", 30)),
      withSdkOutput(b.sink, () => sdk.warnLater("from b", 5)),
      withSdkOutput(a.sink, () => sdk.warnLater("from a again", 15)),
    ]);
    expect(a.lines.sort()).toEqual(["[mcp-sdk] from a", "[mcp-sdk] from a again"]);
    expect(b.lines).toEqual(["[mcp-sdk] from b"]);
    expect(activeScopes()).toBe(0);
  });

  it("goes to the innermost scope when work runs inside another's", async () => {
    const outer = recorder();
    const inner = recorder();
    await withSdkOutput(outer.sink, async () => {
      await sdk.warnLater("outer first", 1);
      await withSdkOutput(inner.sink, () => sdk.warnLater("inner", 1));
      await sdk.warnLater("outer again", 1);
    });
    expect(outer.lines).toEqual(["[mcp-sdk] outer first", "[mcp-sdk] outer again"]);
    expect(inner.lines).toEqual(["[mcp-sdk] inner"]);
  });

  it("is dropped, never printed, where no work awaits it, and every other console call is left alone (a process of its own)", async () => {
    // Vitest takes over a worker's console: what reaches the terminal is seen in a plain Node process.
    const script = join(folder, "print.mjs");
    await writeFile(
      script,
      `
      const { captureSdkConsole, withSdkOutput } = await import(${JSON.stringify(pathToFileURL(join(REPO_ROOT, "src/safety/sdk-output.ts")).href)});
      const sdk = await import(${JSON.stringify(pathToFileURL(join(folder, "node_modules/@modelcontextprotocol/client/fake.mjs")).href)});
      captureSdkConsole();
      const kept = [];
      await sdk.warnLater("no scope", 1);
      await withSdkOutput((line) => kept.push(line), () => sdk.warnDetached("detached", 5));
      await withSdkOutput((line) => kept.push(line), () => sdk.warnLater("scoped", 1));
      console.log("an ordinary line");
      console.error("an ordinary error");
      process.stdout.write(JSON.stringify(kept));
    `,
    );
    const run = await runProcess(nodeBinary(), ["--experimental-transform-types", "--no-warnings", script], {
      cwd: folder,
      env: process.env,
    });
    expect(run.code).toBe(0);
    expect(run.stderr).toBe("an ordinary error\n");
    expect(run.stdout).toBe(`an ordinary line\n${JSON.stringify(["[mcp-sdk] scoped"])}`);
  });
});
