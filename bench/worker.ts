/** Runs one benchmark function in a fresh Node process (bench/run.ts --worker) and returns its JSON result. */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const RUNNER = fileURLToPath(new URL("./run.ts", import.meta.url));
const MARK = "BENCH-RESULT ";

export function runWorker<T>(name: string, options: Record<string, unknown> = {}, timeoutMs = 280_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--experimental-transform-types", "--no-warnings", "--expose-gc", RUNNER, "--worker", name, JSON.stringify(options)],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
      if (stderr.length > 20_000) stderr = stderr.slice(-10_000);
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const line = stdout.split("\n").find((candidate) => candidate.startsWith(MARK));
      if (code === 0 && line) return resolve(JSON.parse(line.slice(MARK.length)) as T);
      reject(new Error(`benchmark ${name} failed (code ${code}, signal ${signal})\n${stderr.slice(-4000)}`));
    });
  });
}

/** The worker side: print the result on one marked line. */
export function reportResult(value: unknown): void {
  process.stdout.write(`${MARK}${JSON.stringify(value)}\n`);
}
