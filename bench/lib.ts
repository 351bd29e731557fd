/**
 * Shared pieces of the benchmarks: statistics, raw SDK clients configured like
 * pi-mcp's own, our host with a recording sink, and the result shape the
 * runner (bench/run.ts) turns into a markdown table.
 */
import { Client, type Tool } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { fixturePath, nodePath, everythingPath } from "../test/helpers/servers.ts";

export { fixturePath, nodePath, everythingPath };

/** One line of the results table. */
export interface Row {
  readonly bench: string;
  readonly metric: string;
  /** pi-mcp's figure (ms, MiB, ... as `unit` says). */
  readonly piMcp: number | string;
  /** The raw SDK's figure in the same run, when there is one. */
  readonly raw?: number | string;
  /** pi-mcp / raw, or whatever ratio the goal is about. */
  readonly ratio?: number;
  readonly unit: string;
  /** The goal, in words (e.g. "median ratio ≤ 1.10"). Rows without a goal are context. */
  readonly goal?: string;
  readonly met?: boolean;
}

export interface BenchResult {
  readonly name: string;
  readonly rows: Row[];
  readonly notes: string[];
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[index]!;
}

export const median = (values: readonly number[]) => quantile(values, 0.5);
export const p99 = (values: readonly number[]) => quantile(values, 0.99);

export const round = (value: number, digits = 3) => Number(value.toFixed(digits));

/** The negotiation pi-mcp's connections use, so raw and pi-mcp talk the same protocol era. */
class InPlaceStdioTransport extends StdioClientTransport {}

export interface RawClient {
  readonly client: Client;
  readonly transport: StdioClientTransport;
  close(): Promise<void>;
}

/**
 * A raw SDK v2 client over stdio. `era: "auto"` negotiates like pi-mcp (the
 * in-place probe, so the era matches ours); "legacy" is the SDK default.
 */
export async function rawStdioClient(
  command: string,
  args: string[],
  options: { env?: Record<string, string>; era?: "auto" | "legacy"; stderr?: (chunk: Buffer) => void; maxBufferSize?: number } = {},
): Promise<RawClient> {
  const era = options.era ?? "auto";
  const transport = new InPlaceStdioTransport({
    command,
    args,
    env: options.env ?? {},
    stderr: "pipe",
    ...(options.maxBufferSize !== undefined && { maxBufferSize: options.maxBufferSize }),
  });
  transport.stderr?.on("data", options.stderr ?? (() => undefined));
  const client = new Client(
    { name: "bench-raw", version: "0.0.0" },
    era === "auto" ? { versionNegotiation: { mode: "auto", probe: { timeoutMs: 3_000 } } } : {},
  );
  await client.connect(transport);
  return { client, transport, close: () => client.close() };
}

/** Lists every tool page by page with explicit cursors, the way a host that pages itself does. */
export async function rawListAll(client: Client): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

export const MiB = 1024 * 1024;

export function rssMiB(): number {
  return process.memoryUsage().rss / MiB;
}

/** Forces a full GC when run with --expose-gc (the runner does), so RSS samples are comparable. */
export function gc(): void {
  (globalThis as { gc?: () => void }).gc?.();
}
