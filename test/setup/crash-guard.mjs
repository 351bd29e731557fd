// Preloaded (NODE_OPTIONS=--import) into the processes the tests start that
// run our code (Pi with pi-mcp, the pi-mcp CLI): every uncaught exception,
// and every unhandled rejection (Node raises those as uncaught exceptions),
// is appended as one JSON line to $PI_MCP_CRASH_LOG. It only watches
// (`uncaughtExceptionMonitor`): the process behaves exactly as without it.
// test/setup/unhandled.ts fails the test during which a line appeared.
import { appendFileSync } from "node:fs";
import process from "node:process";

const log = process.env.PI_MCP_CRASH_LOG;
if (log) {
  process.on("uncaughtExceptionMonitor", (error, origin) => {
    const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
    try {
      appendFileSync(log, `${JSON.stringify({ pid: process.pid, argv: process.argv.slice(1, 3), origin, error: text })}\n`);
    } catch {
      // The log cannot be written: the crash itself still shows in the test's output.
    }
  });
}
