/**
 * 4. Memory, each part in a fresh Node process (--expose-gc) so one part's
 * heap cannot hide or inflate another's:
 * - resident memory per connected server: RSS after connecting 10 stdio
 *   servers (tools listed and bridged) minus RSS before, over 10; pi-mcp's
 *   host versus 10 raw SDK clients;
 * - a 200 MB stderr flood: the server's retained log stays at 256 KiB, and
 *   host RSS stays flat: sampled every 50 ms, its peak while the second half
 *   of the flood drains is no higher than during the first half (what grows
 *   at all is V8's heap sizing under allocation pressure, as with a raw SDK
 *   client that drops its stderr, measured alike); a second server keeps
 *   answering meanwhile;
 * - a message without end over every transport (stdio, a Streamable HTTP
 *   JSON body and event, a legacy SSE event), one after another, into a
 *   host in a process of its own: the 16 MiB message cap keeps its RSS
 *   growth bounded (without it, one endless SSE event grew the host past
 *   3 GB in 45 s);
 * - working memory in proportion to the input: one tool result of 500,000
 *   one-character text blocks (a 13 MB message) through the host, against a
 *   raw SDK client reading the same result; and a 50 MB settings file read
 *   as a session start reads it (the settings stamp before and after, the
 *   load), mostly other keys than `mcp` and all of it `mcp`, against one
 *   JSON.parse of the file. Peak RSS (the process's high-water mark) and peak
 *   heap (sampled every 5 ms) above the settled baseline, printed as
 *   multiples of the input's size.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { createKernel } from "../src/composition.ts";
import { loadConfig } from "../src/config/load.ts";
import { settingsDigest } from "../src/config/settings-stamp.ts";
import { RETAINED_LOG_BYTES } from "../src/runtime/retained-log.ts";
import { runFloodHost } from "../test/helpers/flood.ts";
import { fixtureServer, startHost, type TestHost } from "../test/helpers/host.ts";
import { fixturePath, gc, median, MiB, nodePath, rawStdioClient, round, rssMiB, sleep, type BenchResult, type RawClient } from "./lib.ts";
import { runWorker } from "./worker.ts";

const SERVERS = 10;

/** Stops a host; its private folder may still be receiving the logging plugin's last writes, so removal is retried. */
async function stopHost(h: TestHost): Promise<void> {
  try {
    await h.stop();
  } catch {
    await rm(dirname(h.privateDir), { recursive: true, force: true, maxRetries: 20, retryDelay: 250 });
  }
}

async function settledRss(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc();
    await sleep(50);
  }
  return rssMiB();
}

function heapMiB(): number {
  const usage = process.memoryUsage();
  return (usage.heapUsed + usage.external) / MiB;
}

/** Worker: RSS growth for 10 connected servers through pi-mcp. */
export async function memoryHostServers(): Promise<{ perServer: number; heapPerServer: number }> {
  // Load everything a connection uses before the baseline (one throwaway connection).
  const warm = await startHost({ warm: fixtureServer("basic") });
  await warm.waitForTools(3);
  await warm.call("mcp__warm__echo", { text: "warm" });
  await stopHost(warm);
  const before = await settledRss();
  const heapBefore = heapMiB();
  const servers = Object.fromEntries(Array.from({ length: SERVERS }, (_, i) => [`s${i}`, fixtureServer("basic")]));
  const h = await startHost(servers, { connectTimeoutMs: 20_000 });
  await h.waitForTools(SERVERS * 3, { timeoutMs: 30_000 });
  for (let i = 0; i < SERVERS; i++) await h.call(`mcp__s${i}__echo`, { text: "hi" });
  const after = await settledRss();
  const heapAfter = heapMiB();
  await stopHost(h);
  return { perServer: (after - before) / SERVERS, heapPerServer: (heapAfter - heapBefore) / SERVERS };
}

/** Worker: RSS growth for 10 connected raw SDK clients. */
export async function memoryRawServers(): Promise<{ perServer: number; heapPerServer: number }> {
  const warm = await rawStdioClient(nodePath(), [fixturePath("basic")]);
  await warm.client.listTools();
  await warm.client.callTool({ name: "echo", arguments: { text: "warm" } });
  await warm.close();
  const before = await settledRss();
  const heapBefore = heapMiB();
  const clients: RawClient[] = [];
  for (let i = 0; i < SERVERS; i++) clients.push(await rawStdioClient(nodePath(), [fixturePath("basic")]));
  for (const raw of clients) {
    await raw.client.listTools();
    await raw.client.callTool({ name: "echo", arguments: { text: "hi" } });
  }
  const after = await settledRss();
  const heapAfter = heapMiB();
  await Promise.all(clients.map((raw) => raw.close()));
  return { perServer: (after - before) / SERVERS, heapPerServer: (heapAfter - heapBefore) / SERVERS };
}

interface FloodResult {
  logBytes: number;
  dropped: number;
  baseline: number;
  /** Highest RSS while the first half of the flood was drained, and during the second half. */
  firstHalfPeak: number;
  secondHalfPeak: number;
  after: number;
  seconds: number;
  echoMedian: number;
}

/**
 * Samples RSS every 50 ms while `drained()` (bytes of the flood consumed so
 * far) grows to `total`, and calls `echo` on another server every 20 ms.
 */
async function watchFlood(total: number, drained: () => number, done: () => boolean, echo: () => Promise<void>) {
  const baseline = await settledRss();
  let firstHalfPeak = baseline;
  let secondHalfPeak = 0;
  const sample = () => {
    const rss = rssMiB();
    if (drained() < total / 2) firstHalfPeak = Math.max(firstHalfPeak, rss);
    else secondHalfPeak = Math.max(secondHalfPeak, rss);
  };
  const sampler = setInterval(sample, 50);
  const start = performance.now();
  const echoes: number[] = [];
  // At least one echo, also when the flood drains before the first could start (its median is a row).
  do {
    const t = performance.now();
    await echo();
    echoes.push(performance.now() - t);
    await sleep(20);
    if (performance.now() - start > 120_000) throw new Error("the flood did not finish within 120 s");
  } while (!done());
  const seconds = (performance.now() - start) / 1000;
  clearInterval(sampler);
  sample();
  const after = await settledRss();
  return { baseline, firstHalfPeak, secondHalfPeak, after, seconds, echoMedian: median(echoes) };
}

/** Worker: a stderr flood into pi-mcp's retained log, while a second server is called. */
export async function memoryFlood({ megabytes = 200, disable = [] as string[] } = {}): Promise<FloodResult> {
  const h = await startHost(
    { flood: fixtureServer("stderr-flood", { FIXTURE_FLOOD_MB: String(megabytes) }), other: fixtureServer("basic") },
    { connectTimeoutMs: 20_000, requestTimeoutMs: 30_000, kernel: createKernel({ disable }) },
  );
  try {
    await h.waitForTools(4, { timeoutMs: 30_000 });
    const log = h.host.server("flood")!.log;
    const watched = await watchFlood(
      megabytes * MiB,
      () => log.bytes + log.droppedBytes,
      // The fixture ends with "FLOOD DONE\n" once all of it is written.
      () => log.bytes + log.droppedBytes >= megabytes * MiB + "FLOOD DONE\n".length,
      async () => void (await h.call("mcp__other__echo", { text: "still here" })),
    );
    return { ...watched, logBytes: log.bytes, dropped: log.droppedBytes };
  } finally {
    await stopHost(h);
  }
}

/** Worker: the same flood into a raw SDK client whose stderr is drained and dropped. */
export async function memoryRawFlood({ megabytes = 200 } = {}): Promise<FloodResult> {
  let drained = 0;
  let done = false;
  const flood = await rawStdioClient(nodePath(), [fixturePath("stderr-flood")], {
    env: { FIXTURE_FLOOD_MB: String(megabytes) },
    stderr: (chunk) => {
      drained += chunk.length;
      if (chunk.toString("latin1", Math.max(0, chunk.length - 11)) === "FLOOD DONE\n") done = true;
    },
  });
  const other = await rawStdioClient(nodePath(), [fixturePath("basic")]);
  try {
    const watched = await watchFlood(
      megabytes * MiB,
      () => drained,
      () => done,
      async () => void (await other.client.callTool({ name: "echo", arguments: { text: "still here" } })),
    );
    return { ...watched, logBytes: 0, dropped: drained };
  } finally {
    await flood.close();
    await other.close();
  }
}

/** The peaks of a piece of work above a settled baseline: RSS from the process's high-water mark, heap sampled every 5 ms. */
interface Peaks {
  /** Input size in bytes. */
  readonly input: number;
  readonly rssGrowth: number;
  readonly heapGrowth: number;
  readonly ms: number;
}

async function peaksOf(input: number, work: () => Promise<unknown>): Promise<Peaks> {
  const before = await settledRss();
  const heapBefore = heapMiB();
  const highBefore = process.resourceUsage().maxRSS / 1024;
  let heapPeak = heapBefore;
  const sampler = setInterval(() => {
    heapPeak = Math.max(heapPeak, heapMiB());
  }, 5);
  const start = performance.now();
  await work();
  const ms = performance.now() - start;
  clearInterval(sampler);
  heapPeak = Math.max(heapPeak, heapMiB());
  const high = process.resourceUsage().maxRSS / 1024;
  // A high-water mark from before the baseline (start-up) would hide the work's own peak: say so rather than under-report.
  if (high <= highBefore) throw new Error(`the work did not raise the RSS high-water mark (${round(high, 0)} MiB); nothing to measure`);
  return { input, rssGrowth: high - before, heapGrowth: heapPeak - heapBefore, ms };
}

/** The size of the `blocks` tool's answer (big-output fixture): `n` text blocks of one character. */
function blocksMessageBytes(n: number): number {
  return JSON.stringify({ content: Array.from({ length: n }, (_, i) => ({ type: "text", text: String(i).slice(-1) })) }).length;
}

/** Worker: one result of `blocks` one-character text blocks through pi-mcp's host (mapping, Pi's limits, the spill). */
export async function memoryResult({ blocks = 500_000 } = {}): Promise<Peaks> {
  const h = await startHost({ big: fixtureServer("big-output") }, { requestTimeoutMs: 280_000 });
  try {
    await h.waitForTools(4, { server: "big" });
    await h.call("mcp__big__blocks", { n: 1000, size: 1 });
    return await peaksOf(blocksMessageBytes(blocks), () => h.call("mcp__big__blocks", { n: blocks, size: 1 }));
  } finally {
    await stopHost(h);
  }
}

/** Worker: the same result read by a raw SDK client (its stdio buffer raised to pi-mcp's 16 MiB message cap). */
export async function memoryRawResult({ blocks = 500_000 } = {}): Promise<Peaks> {
  const raw = await rawStdioClient(nodePath(), [fixturePath("big-output")], { maxBufferSize: 16 * MiB });
  try {
    await raw.client.callTool({ name: "blocks", arguments: { n: 1000, size: 1 } });
    return await peaksOf(blocksMessageBytes(blocks), () =>
      raw.client.callTool({ name: "blocks", arguments: { n: blocks, size: 1 } }, { timeout: 280_000 }),
    );
  } finally {
    await raw.close();
  }
}

/**
 * A settings file of about `megabytes`: "other" is Pi's settings with one
 * large key beside a small `mcp` (an array of small objects, the densest JSON
 * there is); "mcp" is all server definitions. Pretty-printed, as Pi writes it.
 */
async function writeLargeSettings(shape: "other" | "mcp", megabytes: number): Promise<{ agentDir: string; cwd: string; bytes: number }> {
  const root = await mkdtemp(join(tmpdir(), "pi-mcp-bench-settings-"));
  const agentDir = join(root, "agent");
  const cwd = join(root, "project");
  await mkdir(agentDir, { recursive: true });
  await mkdir(cwd);
  const target = megabytes * MiB;
  const lines: string[] = [];
  let size = 0;
  const add = (text: string) => {
    lines.push(text);
    size += text.length;
  };
  if (shape === "other") {
    add('{\n  "theme": "dark",\n  "mcp": { "servers": { "docs": { "command": "node", "args": ["docs.js"] } } },\n  "history": [\n');
    for (let i = 0; size < target; i++)
      add(`${i > 0 ? ",\n" : ""}    { "id": ${i}, "name": "entry-${i}", "tags": ["a", "b"], "on": true }`);
    add("\n  ]\n}\n");
  } else {
    add('{\n  "mcp": {\n    "servers": {\n');
    for (let i = 0; size < target; i++)
      add(
        `${i > 0 ? ",\n" : ""}      "s${i}": { "command": "node", "args": ["server-${i}.js", "--flag"], "environment": { "TOKEN": "abc" } }`,
      );
    add("\n    }\n  }\n}\n");
  }
  await writeFile(join(agentDir, "settings.json"), lines.join(""));
  return { agentDir, cwd, bytes: size };
}

/** Worker: a session start's reads of one settings file (`raw`: one JSON.parse of it instead). */
export async function memorySettingsRead({ agentDir = "", cwd = "", bytes = 0, raw = false } = {}): Promise<Peaks> {
  return peaksOf(bytes, async () => {
    if (raw) return JSON.parse(await readFile(join(agentDir, "settings.json"), "utf8"));
    // As the Pi entry does: the settings stamp, the load, the stamp again (src/pi/extension.ts loadStamped).
    const stamp = () => settingsDigest({ agentDir, cwd, trusted: false, env: process.env });
    stamp();
    const config = await loadConfig({ agentDir, cwd, projectTrusted: false, env: process.env });
    stamp();
    if (!config.valid) throw new Error(`the benchmark's settings are invalid: ${config.issues[0]?.message}`);
    return config;
  });
}

/** The rows of "working memory in proportion to the input" (see the module comment). */
export async function memoryProportion({ blocks = 500_000, settingsMegabytes = 50 } = {}): Promise<BenchResult["rows"]> {
  const bench = "4. memory";
  const times = (peaks: Peaks, value: number) => round(value / (peaks.input / MiB), 1);
  const result = await runWorker<Peaks>("memoryResult", { blocks });
  const rawResult = await runWorker<Peaks>("memoryRawResult", { blocks });
  const rows: BenchResult["rows"] = [
    {
      bench,
      metric: `one tool result of ${blocks.toLocaleString("en-US")} text blocks (${round(result.input / MiB, 1)} MiB message): peak RSS growth in the host, × the message size (${round(result.rssGrowth, 0)} MiB; raw SDK client ${round(rawResult.rssGrowth, 0)} MiB; pi-mcp ${round(result.ms / 1000, 1)} s, raw ${round(rawResult.ms / 1000, 1)} s)`,
      piMcp: times(result, result.rssGrowth),
      raw: times(rawResult, rawResult.rssGrowth),
      ratio: round(result.rssGrowth / rawResult.rssGrowth, 2),
      unit: "× size",
      goal: "≤ 1.5 × the raw SDK client's",
      met: result.rssGrowth <= 1.5 * rawResult.rssGrowth,
    },
    {
      bench,
      metric: `same result: peak heap growth (heap + external, sampled every 5 ms), × the message size (${round(result.heapGrowth, 0)} MiB; raw ${round(rawResult.heapGrowth, 0)} MiB)`,
      piMcp: times(result, result.heapGrowth),
      raw: times(rawResult, rawResult.heapGrowth),
      unit: "× size",
    },
  ];
  for (const shape of ["other", "mcp"] as const) {
    const file = await writeLargeSettings(shape, settingsMegabytes);
    try {
      const read = await runWorker<Peaks>("memorySettingsRead", file);
      const parse = await runWorker<Peaks>("memorySettingsRead", { ...file, raw: true });
      // A file of server definitions alone is dense JSON: one parse of it already takes about 5 times its size.
      const goal =
        shape === "other"
          ? { text: "≤ 4 × size", met: read.rssGrowth <= 4 * (file.bytes / MiB) }
          : { text: "≤ 3 × one JSON.parse of it", met: read.rssGrowth <= 3 * parse.rssGrowth };
      rows.push({
        bench,
        metric: `${round(file.bytes / MiB, 0)} MiB settings file, ${shape === "other" ? "mostly keys other than mcp" : "all of it server definitions in mcp"}: a session start's reads (stamp, load, stamp), peak RSS growth × the file size (${round(read.rssGrowth, 0)} MiB in ${round(read.ms / 1000, 1)} s; one JSON.parse ${round(parse.rssGrowth, 0)} MiB)`,
        piMcp: times(read, read.rssGrowth),
        raw: times(parse, parse.rssGrowth),
        ratio: round(read.rssGrowth / parse.rssGrowth, 2),
        unit: "× size",
        goal: goal.text,
        met: goal.met,
      });
    } finally {
      await rm(dirname(file.agentDir), { recursive: true, force: true });
    }
  }
  return rows;
}

export async function memory({ megabytes = 200 } = {}): Promise<BenchResult> {
  const host = await runWorker<{ perServer: number; heapPerServer: number }>("memoryHostServers");
  const raw = await runWorker<{ perServer: number; heapPerServer: number }>("memoryRawServers");
  const flood = await runWorker<FloodResult>("memoryFlood", { megabytes });
  const rawFlood = await runWorker<FloodResult>("memoryRawFlood", { megabytes });
  const endless = await runFloodHost();
  const endlessGrowth = (endless.peakKiB - endless.baselineKiB) / 1024;
  const endlessCut = Object.values(endless.results).every((result) => result.error?.includes("16 MiB message-size limit"));
  const logOk = flood.logBytes <= RETAINED_LOG_BYTES;
  const secondHalfGrowth = flood.secondHalfPeak - flood.firstHalfPeak;
  // A leak of the flood's data would add ~100 MiB over the second 100 MB; bounded heap growth adds a few.
  const flat = secondHalfGrowth <= 16;
  const growth = (result: FloodResult) => Math.max(result.firstHalfPeak, result.secondHalfPeak) - result.baseline;
  const bench = "4. memory";
  return {
    name: "memory",
    rows: [
      {
        bench,
        metric: `RSS per connected stdio server (host process; ${SERVERS} servers connected, tools listed, one call each)`,
        piMcp: round(host.perServer, 2),
        raw: round(raw.perServer, 2),
        ratio: round(host.perServer / raw.perServer, 2),
        unit: "MiB",
      },
      {
        bench,
        metric: "JS heap + external memory per connected server (same run)",
        piMcp: round(host.heapPerServer, 3),
        raw: round(raw.heapPerServer, 3),
        ratio: round(host.heapPerServer / raw.heapPerServer, 2),
        unit: "MiB",
      },
      {
        bench,
        metric: `${megabytes} MB stderr flood: the server's retained log (${round(flood.dropped / MiB, 0)} MiB dropped)`,
        piMcp: flood.logBytes,
        unit: "bytes",
        goal: `≤ ${RETAINED_LOG_BYTES} (256 KiB)`,
        met: logOk,
      },
      {
        bench,
        metric: `${megabytes} MB stderr flood: host RSS growth during the second ${megabytes / 2} MB (peak in 2nd half − peak in 1st half)`,
        piMcp: round(secondHalfGrowth, 1),
        raw: round(rawFlood.secondHalfPeak - rawFlood.firstHalfPeak, 1),
        unit: "MiB",
        goal: "≤ 16 MiB (flat; a leak would add ~100)",
        met: flat,
      },
      {
        bench,
        metric: `${megabytes} MB stderr flood: RSS before → peak → after (drained in ${round(flood.seconds, 1)} s; raw ${round(rawFlood.seconds, 1)} s)`,
        piMcp: `${round(flood.baseline, 0)} → ${round(Math.max(flood.firstHalfPeak, flood.secondHalfPeak), 0)} → ${round(flood.after, 0)}`,
        raw: `${round(rawFlood.baseline, 0)} → ${round(Math.max(rawFlood.firstHalfPeak, rawFlood.secondHalfPeak), 0)} → ${round(rawFlood.after, 0)}`,
        ratio: round(growth(flood) / growth(rawFlood), 2),
        unit: "MiB",
      },
      {
        bench,
        metric: "echo on a second server during the flood, median",
        piMcp: round(flood.echoMedian, 2),
        raw: round(rawFlood.echoMedian, 2),
        ratio: round(flood.echoMedian / rawFlood.echoMedian, 2),
        unit: "ms",
      },
      {
        bench,
        metric: `a message without end on stdio, HTTP (JSON body, event) and legacy SSE, one after another: host RSS growth, peak − before (${round(endless.baselineKiB / 1024, 0)} → ${round(endless.peakKiB / 1024, 0)} MiB; each call ${endlessCut ? "failed naming the 16 MiB cap" : "did NOT fail at the cap"})`,
        piMcp: round(endlessGrowth, 1),
        unit: "MiB",
        goal: "≤ 200 MiB (16 MiB message cap; without it the host grew by gigabytes)",
        met: endlessCut && endlessGrowth <= 200,
      },
      ...(await memoryProportion()),
    ],
    notes: [],
  };
}
