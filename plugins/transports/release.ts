import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import type { Stream } from "node:stream";
import { withDeadline } from "../../src/kernel/async.ts";

/** How long, once a server's tree has ended, its pipes may take to report their end before they are let go of. */
const PIPES_END_MS = 250;

/**
 * Lets go of a closed server's process and pipes, so nothing of it keeps
 * the event loop (Pi, `pi-mcp test`) alive: a process that is not in its
 * tree any more can still hold the other end of a pipe, and Node waits for
 * every pipe's end before it reports the child closed. What arrives on the
 * pipes until then is read as usual; then our ends are destroyed, the copy
 * of stderr the log reads is ended, and the child handle is unreferenced.
 */
export async function releaseChild(child: ChildProcess, stderrCopy: Stream | null): Promise<void> {
  const open = [child.stdout, child.stderr].some((stream) => stream && !stream.destroyed && !stream.readableEnded);
  if (open) await withDeadline(once(child, "close"), PIPES_END_MS, () => new Error("pipes still open")).catch(() => undefined);
  for (const stream of [child.stdin, child.stdout, child.stderr]) stream?.destroy();
  // A destroyed source does not end what it was piped into.
  const copy = stderrCopy as { writableEnded?: boolean; end?: () => void } | null;
  if (copy?.end && copy.writableEnded === false) copy.end();
  child.unref();
}
