/**
 * 5. Concurrency: 200 concurrent calls spread over 10 stdio servers (20 each),
 * one of which answers each call only after `slowMs`. The 180 calls to the
 * nine others must finish as if the slow one were not there: compared with
 * the same 200 calls when that server answers at once. pi-mcp and raw SDK
 * clients run the same rounds.
 */
import { performance } from "node:perf_hooks";
import { fixtureServer, startHost, type TestHost } from "../test/helpers/host.ts";
import { fixturePath, median, nodePath, p99, rawStdioClient, round, type BenchResult, type RawClient } from "./lib.ts";

const SERVERS = 10;
const PER_SERVER = 20;

interface Round {
  /** Latency of each call to the nine fast servers, ms. */
  fast: number[];
  /** From issuing the calls until the last fast call answered, ms. */
  fastDone: number;
}

type Call = (server: number, ms: number) => Promise<void>;

async function round_(call: Call, withSlow: boolean, slowMs: number): Promise<Round> {
  const fast: number[] = [];
  let fastDone = 0;
  const start = performance.now();
  const pending: Promise<void>[] = [];
  const slow: Promise<void>[] = [];
  // Interleaved: server 0, 1, ..., 9, 0, 1, ... so the slow server's calls are spread among the others.
  for (let i = 0; i < PER_SERVER; i++) {
    for (let server = 0; server < SERVERS; server++) {
      if (server === 0) {
        slow.push(call(0, withSlow ? slowMs : 0));
        continue;
      }
      pending.push(
        call(server, 0).then(() => {
          const at = performance.now();
          fast.push(at - start);
          fastDone = Math.max(fastDone, at - start);
        }),
      );
    }
  }
  await Promise.all(pending);
  await Promise.all(slow);
  return { fast, fastDone };
}

interface Summary {
  median: number;
  p99: number;
  /** Median over rounds of the time until the last fast call was done. */
  done: number;
  done_beside: number;
  /** Median over round pairs of (beside / alone) for that time: robust to drift between pairs. */
  ratio: number;
}

/**
 * Each round runs, for pi-mcp and for the raw clients, one batch with the slow
 * server and one without, back to back (which goes first alternates), and
 * keeps the ratio of the pair; the median of those ratios is the result.
 */
async function measure(host: Call, raw: Call, rounds: number, slowMs: number) {
  await round_(host, true, slowMs); // warm-up
  await round_(raw, true, slowMs);
  const sides = {
    host: { call: host, alone: [] as Round[], beside: [] as Round[], ratios: [] as number[] },
    raw: { call: raw, alone: [] as Round[], beside: [] as Round[], ratios: [] as number[] },
  };
  for (let i = 0; i < rounds; i++) {
    for (const name of i % 2 === 0 ? (["host", "raw"] as const) : (["raw", "host"] as const)) {
      const side = sides[name];
      let alone: Round;
      let beside: Round;
      if (i % 4 < 2) {
        alone = await round_(side.call, false, slowMs);
        beside = await round_(side.call, true, slowMs);
      } else {
        beside = await round_(side.call, true, slowMs);
        alone = await round_(side.call, false, slowMs);
      }
      side.alone.push(alone);
      side.beside.push(beside);
      side.ratios.push(beside.fastDone / alone.fastDone);
    }
  }
  const summary = (side: (typeof sides)["host"]): Summary => ({
    median: median(side.beside.flatMap((r) => r.fast)),
    p99: p99(side.beside.flatMap((r) => r.fast)),
    done: median(side.alone.map((r) => r.fastDone)),
    done_beside: median(side.beside.map((r) => r.fastDone)),
    ratio: median(side.ratios),
  });
  return { host: summary(sides.host), raw: summary(sides.raw) };
}

export async function concurrency({ rounds = 40, slowMs = 200 } = {}): Promise<BenchResult> {
  const servers = Object.fromEntries(Array.from({ length: SERVERS }, (_, i) => [`s${i}`, fixtureServer("hang")]));
  const h: TestHost = await startHost(servers, { connectTimeoutMs: 15_000 });
  const raws: RawClient[] = [];
  try {
    await h.waitForTools(SERVERS * 2, { timeoutMs: 20_000 });
    for (let i = 0; i < SERVERS; i++) raws.push(await rawStdioClient(nodePath(), [fixturePath("hang")]));
    const tools = Array.from({ length: SERVERS }, (_, i) => h.sink.tools.get(`mcp__s${i}__slow`)!);
    const hostCall: Call = async (server, ms) => {
      const outcome = await tools[server]!.execute({ ms }, {});
      if (outcome.isError) throw new Error("pi-mcp slow failed");
    };
    const rawCall: Call = async (server, ms) => {
      const result = await raws[server]!.client.callTool({ name: "slow", arguments: { ms } });
      if (result.isError) throw new Error("raw slow failed");
    };
    const { host, raw } = await measure(hostCall, rawCall, rounds, slowMs);
    const bench = "5. concurrency";
    return {
      name: "concurrency",
      rows: [
        {
          bench,
          metric: `200 concurrent calls over 10 servers, one answering after ${slowMs} ms: time until the other nine's 180 calls are done, with that server slow / answering at once (pi-mcp; median of ${rounds} paired rounds)`,
          piMcp: `${round(host.done_beside, 1)} / ${round(host.done, 1)}`,
          ratio: round(host.ratio, 2),
          unit: "ms",
          goal: "ratio ≤ 1.10",
          met: host.ratio <= 1.1,
        },
        {
          bench,
          metric: "same, raw SDK clients",
          piMcp: `${round(raw.done_beside, 1)} / ${round(raw.done, 1)}`,
          ratio: round(raw.ratio, 2),
          unit: "ms",
        },
        {
          bench,
          metric: "fast-call latency beside the slow server: median (pi-mcp vs raw)",
          piMcp: round(host.median, 2),
          raw: round(raw.median, 2),
          ratio: round(host.median / raw.median, 2),
          unit: "ms",
        },
        {
          bench,
          metric: "fast-call latency beside the slow server: p99 (pi-mcp vs raw)",
          piMcp: round(host.p99, 2),
          raw: round(raw.p99, 2),
          ratio: round(host.p99 / raw.p99, 2),
          unit: "ms",
        },
      ],
      notes: [],
    };
  } finally {
    await h.stop();
    await Promise.all(raws.map((raw) => raw.close()));
  }
}
