/**
 * Heap pacing while a big catalog registers.
 *
 * Every registration after the session is bound makes Pi build its whole
 * tool registry anew and drop the previous one: with thousands of tools that
 * is megabytes of garbage per registration, much of it tables of over 4,096
 * entries that V8 allocates straight into its old generation, which only a
 * full collection frees. V8 lets the heap grow to a multiple (up to four
 * times) of what survived its last full collection before it starts the
 * next, so while a catalog registers Pi's peak memory is a multiple of its
 * live heap: 5,000 tools on a first start peaked at 433–461 MiB of RSS (Pi's
 * built-in MCP: 297–334 MiB), with pacing at 249–272 MiB.
 *
 * While registrations run in slices (a catalog too big for one slice), the
 * heap grows by at most half before V8 collects (its heap growing factor set
 * to 1.5): V8 starts its own incremental, concurrent collections sooner, so
 * no pause is added (nothing is collected by force). When the last queue
 * drains or closes, V8's own dynamic factor is back. The setting is the
 * process's, so holds are counted across sessions and module copies (Pi
 * imports pi-mcp afresh on /reload). A Pi started with its own
 * `--heap-growing-percent` keeps it, and a runtime without
 * `v8.setFlagsFromString` is left alone.
 */
import { setFlagsFromString } from "node:v8";

/** V8 collects once the heap has grown by this much since the last full collection (while paced). */
export const PACED_GROWTH_PERCENT = 50;
/** V8's default: its growing factor is dynamic. */
const DEFAULT_GROWTH_PERCENT = 0;
const FLAG = "heap-growing-percent";

interface PacingState {
  holders: number;
}

const STATE_KEY = Symbol.for("pi-mcp.heap-pacing");

function state(): PacingState {
  const global = globalThis as { [STATE_KEY]?: PacingState };
  global[STATE_KEY] ??= { holders: 0 };
  return global[STATE_KEY];
}

/** Whether Pi was started with its own growing factor (command line or NODE_OPTIONS): then it is never changed. */
function setByUser(): boolean {
  const given = [...process.execArgv, process.env.NODE_OPTIONS ?? ""].join(" ");
  return given.includes(FLAG) || given.includes(FLAG.replaceAll("-", "_"));
}

function setGrowth(percent: number): void {
  try {
    setFlagsFromString(`--${FLAG}=${percent}`);
  } catch {
    // Not V8 under Node (no such flag or function): memory is then as without pacing.
  }
}

/** Paces the heap until the returned release is called (once; later calls do nothing). */
export function holdHeapPacing(): () => void {
  if (setByUser()) return () => {};
  const pacing = state();
  if (pacing.holders++ === 0) setGrowth(PACED_GROWTH_PERCENT);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--pacing.holders === 0) setGrowth(DEFAULT_GROWTH_PERCENT);
  };
}
