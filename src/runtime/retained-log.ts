import type { ServerLog } from "../kernel/types.ts";

/** The newest bytes a server log keeps (stderr and MCP logging together). */
export const RETAINED_LOG_BYTES = 256 * 1024;

/**
 * A bounded text log: appends are cheap and memory stays at most `limit`
 * bytes (plus one chunk) however much a server writes.
 */
export class RetainedLog implements ServerLog {
  private chunks: Buffer[] = [];
  private size = 0;
  private dropped = 0;
  private lastByte = 0x0a;
  private readonly listeners = new Set<() => void>();

  constructor(private readonly limit = RETAINED_LOG_BYTES) {}

  append(data: string | Buffer): void {
    let chunk = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    if (chunk.length > this.limit) {
      this.dropped += chunk.length - this.limit;
      chunk = chunk.subarray(chunk.length - this.limit);
    }
    if (chunk.length === 0) return;
    this.lastByte = chunk[chunk.length - 1]!;
    this.chunks.push(chunk);
    this.size += chunk.length;
    for (const listener of this.listeners) listener();
    while (this.size > this.limit) {
      const first = this.chunks[0]!;
      const excess = this.size - this.limit;
      if (first.length <= excess) {
        this.chunks.shift();
        this.size -= first.length;
        this.dropped += first.length;
      } else {
        this.chunks[0] = first.subarray(excess);
        this.size -= excess;
        this.dropped += excess;
      }
    }
  }

  /** Called after every append (a persister coalesces them). */
  onAppend(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The retained text (a leading partial character from trimming is dropped). */
  text(): string {
    return Buffer.concat(this.chunks)
      .toString("utf8")
      .replace(/^\uFFFD+/, "");
  }

  get bytes(): number {
    return this.size;
  }

  get endsLine(): boolean {
    return this.lastByte === 0x0a;
  }

  /** How many older bytes were discarded to stay within the limit. */
  get droppedBytes(): number {
    return this.dropped;
  }
}
