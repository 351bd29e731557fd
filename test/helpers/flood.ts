/**
 * Runs test/faults/fixtures/flood-host.ts (a host in a process of its own
 * whose servers each answer with a message without end, over stdio,
 * Streamable HTTP and legacy SSE) against fresh HTTP and SSE fixtures, and
 * returns its report. Shared by test/faults/limits.test.ts and bench/memory.ts.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { crashGuardEnv } from "../setup/crash-guard-env.ts";
import { nodePath, startHttpFixture } from "./servers.ts";

export interface FloodReport {
  /** Per flood (stdio, http-json, http-event, sse): how its call ended (null: it succeeded) and how long it took. */
  readonly results: Record<string, { readonly error: string | null; readonly ms: number }>;
  /** The host process's resident memory (KiB) before the floods, its peak while they ran, and the kernel's high-water mark. */
  readonly baselineKiB: number;
  readonly peakKiB: number;
  readonly highWaterKiB: number;
}

const PROBE = join(import.meta.dirname, "../faults/fixtures/flood-host.ts");

export async function runFloodHost(timeoutMs = 120_000): Promise<FloodReport> {
  const [http, sse] = await Promise.all([startHttpFixture("http-faults"), startHttpFixture("sse-only")]);
  try {
    const env = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", TMPDIR: process.env.TMPDIR ?? "/tmp" };
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(
        nodePath(),
        ["--experimental-transform-types", "--no-warnings", PROBE, JSON.stringify({ http: http.url, sse: `${sse.baseUrl}/sse` })],
        { env: { ...env, ...crashGuardEnv(env) }, timeout: timeoutMs, maxBuffer: 1024 * 1024 },
        (error, out, err) => (error ? reject(new Error(`the flood host failed (${error.message}): ${out}\n${err}`)) : resolve(out)),
      );
    });
    return JSON.parse(stdout) as FloodReport;
  } finally {
    await Promise.allSettled([http.stop(), sse.stop()]);
  }
}
