/**
 * 9. Connect time of an ordinary 2025-era stdio server (server-everything, the
 * era-2025 fixture): spawn → connected with its tools listed, through pi-mcp
 * (a host with a recording sink: the first start, nothing known, probes in
 * place; with a known catalog, whose era verdict skips the probe) against the
 * raw SDK v2 client in the same run: its default (no negotiation: initialize
 * alone), `auto` on a subclass (probes in place, as pi-mcp), and `auto` on
 * the SDK's own StdioClientTransport (probes on a short-lived sibling
 * process, then starts the server). Rounds alternate the sides' order.
 */
import { performance } from "node:perf_hooks";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { type RawDefinition, startHost } from "../test/helpers/host.ts";
import type { CachedStart } from "../src/runtime/catalog-cache.ts";
import type { StartSnapshot } from "../src/runtime/catalog-store.ts";
import { everythingPath, fixturePath, median, nodePath, round, type BenchResult, type Row } from "./lib.ts";

class InPlace extends StdioClientTransport {}

type Side = "pi-mcp first" | "pi-mcp known" | "raw initialize" | "raw in place" | "raw sibling";
const SIDES: readonly Side[] = ["pi-mcp first", "pi-mcp known", "raw initialize", "raw in place", "raw sibling"];

async function raw(side: Side, args: string[]): Promise<number> {
  const start = performance.now();
  const params = { command: nodePath(), args, env: {}, stderr: "ignore" as const };
  const transport = side === "raw sibling" ? new StdioClientTransport(params) : new InPlace(params);
  const client = new Client(
    { name: "bench-raw", version: "0.0.0" },
    side === "raw initialize" ? {} : { versionNegotiation: { mode: "auto", probe: { timeoutMs: 3_000 } } },
  );
  await client.connect(transport);
  await client.listTools();
  const ms = performance.now() - start;
  await client.close();
  return ms;
}

/** pi-mcp: host start → the server connected (its tools listed); `known` is what an earlier session recorded. */
async function piMcp(
  definition: RawDefinition,
  known: CachedStart | undefined,
  record?: (snapshot: StartSnapshot) => void,
): Promise<number> {
  const h = await startHost(
    { s: definition },
    {
      start: false,
      catalogs: {
        ...(known && { preloaded: known }),
        stamp: () => "bench",
        save: async (snapshot) => record?.(snapshot),
      },
    },
  );
  try {
    const start = performance.now();
    await h.host.start();
    await h.waitForState("s", "connected", 60_000);
    return performance.now() - start;
  } finally {
    await h.stop();
  }
}

export async function connect({ rounds = 12 } = {}): Promise<BenchResult> {
  const servers: [string, string[]][] = [
    ["server-everything", [everythingPath(), "stdio"]],
    ["era-2025 fixture", [fixturePath("era-2025")]],
  ];
  const rows: Row[] = [];
  const notes: string[] = [];
  for (const [label, args] of servers) {
    const definition: RawDefinition = { command: nodePath(), args };
    // What a first session records: the catalog and the era verdict the next one starts from.
    let snapshot: StartSnapshot | undefined;
    await piMcp(definition, undefined, (recorded) => {
      snapshot = recorded;
    });
    const server = snapshot?.servers[0];
    if (!server?.era) throw new Error(`${label}: the first session recorded no era verdict`);
    const known: CachedStart = {
      source: "files",
      complete: true,
      servers: [{ ...server, matches: (identity) => identity === server.identity }],
    };
    const times = new Map<Side, number[]>(SIDES.map((side) => [side, []]));
    await raw("raw in place", args); // warm the file cache
    for (let i = 0; i < rounds; i++) {
      const order = i % 2 === 0 ? SIDES : [...SIDES].reverse();
      for (const side of order) {
        const ms =
          side === "pi-mcp first"
            ? await piMcp(definition, undefined)
            : side === "pi-mcp known"
              ? await piMcp(definition, known)
              : await raw(side, args);
        times.get(side)!.push(ms);
      }
    }
    const m = (side: Side) => round(median(times.get(side)!), 1);
    const first = m("pi-mcp first");
    const withKnown = m("pi-mcp known");
    rows.push(
      {
        bench: "9. connect",
        metric: `${label} over stdio, spawn → connected and listed: pi-mcp with a known catalog (its era verdict: initialize alone) vs pi-mcp's first start (probe in place); medians of ${rounds} rounds`,
        piMcp: withKnown,
        raw: first,
        ratio: round(withKnown / first),
        unit: "ms",
        goal: "ratio ≤ 1.00 (start-up does not grow)",
        met: withKnown <= first,
      },
      {
        bench: "9. connect",
        metric: `${label}, pi-mcp's first start vs the raw SDK probing in place (the same messages; the rest is the host's own start)`,
        piMcp: first,
        raw: m("raw in place"),
        ratio: round(first / m("raw in place")),
        unit: "ms",
      },
      {
        bench: "9. connect",
        metric: `${label}, pi-mcp with a known catalog vs the raw SDK's plain initialize (the SDK default)`,
        piMcp: withKnown,
        raw: m("raw initialize"),
        ratio: round(withKnown / m("raw initialize")),
        unit: "ms",
      },
      {
        bench: "9. connect",
        metric: `${label}, the raw SDK's own stdio transport (probe on a sibling process, then the server) vs probing in place`,
        piMcp: m("raw sibling"),
        raw: m("raw in place"),
        ratio: round(m("raw sibling") / m("raw in place")),
        unit: "ms",
      },
    );
    notes.push(`9. ${label}: medians ${SIDES.map((side) => `${side} ${m(side)} ms`).join(", ")}`);
  }
  return { name: "connect", rows, notes };
}
