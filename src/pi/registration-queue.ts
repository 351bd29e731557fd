/**
 * Pi's tool registrations, in time slices. After the session is bound, every
 * `pi.registerTool` rebuilds Pi's whole tool registry (Pi 1.6's
 * `_refreshToolRegistry`), so registering a catalog of N tools costs Pi
 * O(N²), and done in one go it blocks the event loop (the TUI, Ctrl+C and
 * every other server) for all of it: 6,000 tools were one block of ~30 s.
 * Here registrations run in slices of at most SLICE_MS each (a slice always
 * makes progress: at least one operation), with a turn of the event loop
 * between two slices (setImmediate: input, timers and I/O run there); the
 * longest block is one slice plus the registration under way. A batch that
 * fits in one slice, the common case, is done before `register` returns, as
 * before.
 *
 * The total is kept as low as Pi's public API allows: a direct tool is
 * registered with `defaultActive: false` and activated with the others by
 * one `setActiveTools` when the queue drains, or earlier when an agent run
 * starts (`activateRegistered`: its requests carry what is registered by
 * then). Pi's refresh of a registration walks its active tools as well as
 * its registered ones, so tools activated while a big catalog is still
 * registering make every later registration dearer: 5,000 tools registered
 * inactive and activated at the end took Pi half the time (and less memory)
 * of 5,000 activated as they came. A batch that fits in one slice, the
 * common case, is registered and active before `register` returns. While
 * registrations span slices, the heap is paced (heap-pacing.ts): Pi's
 * discarded registries would otherwise let its memory grow to a multiple of
 * its live heap.
 *
 * Operations keep their order: a deactivation queued after a registration
 * applies after it (pending activations are applied first). `close` drops
 * what is still queued (the session ended: its Pi API is stale).
 */
import type { ExtensionAPI, ToolDefinition } from "@earendil-works/pi-coding-agent";
import { performance } from "node:perf_hooks";
import { holdHeapPacing } from "./heap-pacing.ts";

/** The longest a slice runs before it yields to the event loop (the TUI and the other servers). */
export const SLICE_MS = 25;

type PiTools = Pick<ExtensionAPI, "registerTool" | "getActiveTools" | "setActiveTools" | "getAllTools">;

/** One thing to do, in order. */
type Operation =
  /** `activate`: a direct tool, made active once registered (with its neighbours). */
  | { readonly kind: "register"; readonly tool: QueuedTool; readonly activate: boolean }
  /** Tools to be active (direct ones), and the Pi tools that reach the others (tool_search, codemode), activated when Pi has them. */
  | { readonly kind: "activate"; readonly names: readonly string[]; readonly reaching: readonly string[] }
  | { readonly kind: "deactivate"; readonly names: readonly string[] };

/**
 * A tool to register, its definition made when its turn comes (in a slice):
 * making thousands of definitions at once would be one block of its own.
 */
export interface QueuedTool {
  readonly name: string;
  definition(): ToolDefinition;
}

export interface RegistrationQueueOptions {
  /** Registering one tool failed (Pi refused its definition): the others go on. */
  readonly onError?: (name: string, error: unknown) => void;
  /** A tool reached Pi (the entry's rows drawn before it look for its renderers again). */
  readonly onRegistered?: () => void;
  /** Held while registrations span slices (a big catalog): see heap-pacing.ts. Test seam. */
  readonly pacing?: () => () => void;
  /** Test seams. */
  readonly sliceMs?: number;
  readonly now?: () => number;
}

export class RegistrationQueue {
  private readonly pi: PiTools;
  private readonly operations: Operation[] = [];
  /** The next operation to run (a read index: the array is compacted when it drains). */
  private next = 0;
  private readonly pendingActive = new Set<string>();
  private readonly pendingReaching = new Set<string>();
  private scheduled = false;
  private closed = false;
  /** Releases the heap pacing held while registrations span slices. */
  private releasePacing: (() => void) | undefined;
  private readonly waiters: (() => void)[] = [];
  private readonly options: RegistrationQueueOptions;
  private readonly now: () => number;

  constructor(pi: PiTools, options: RegistrationQueueOptions = {}) {
    this.pi = pi;
    this.options = options;
    this.now = options.now ?? (() => performance.now());
  }

  /** Registers `tools` (each definition made in the slice that registers it), then activates `active` (and the reaching tools Pi has); runs at once as far as a slice goes. */
  register(tools: readonly QueuedTool[], active: readonly string[], reaching: readonly string[] = []): void {
    const activating = new Set(active);
    for (const tool of tools) {
      const activate = activating.has(tool.name);
      this.operations.push({ kind: "register", tool, activate });
      activating.delete(tool.name);
    }
    // What is to be active without being registered now (a tool Pi already has), and the reaching tools.
    this.push({ kind: "activate", names: [...activating], reaching });
  }

  /** Makes `names` active (tools Pi already has), after what is queued before. */
  activate(names: readonly string[], reaching: readonly string[] = []): void {
    this.push({ kind: "activate", names, reaching });
  }

  /** Makes `names` inactive, after what is queued before. */
  deactivate(names: readonly string[]): void {
    this.push({ kind: "deactivate", names });
  }

  /** Makes every tool registered so far active now, while the rest still registers (what an agent run about to start should see). */
  activateRegistered(): void {
    if (!this.closed) this.applyActivations();
  }

  /** Resolves once everything queued so far is done (or the queue was closed). */
  idle(): Promise<void> {
    if (this.closed || !this.busy) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Whether operations are still waiting. */
  get busy(): boolean {
    return this.next < this.operations.length || this.pendingActive.size > 0 || this.pendingReaching.size > 0;
  }

  /** Drops what is queued: the session ended, and Pi's API of it is stale. */
  close(): void {
    this.closed = true;
    this.operations.length = 0;
    this.next = 0;
    this.pendingActive.clear();
    this.pendingReaching.clear();
    this.wake();
  }

  private push(operation: Operation): void {
    if (this.closed) return;
    this.operations.push(operation);
    // Queued behind a slice still to come: that slice runs it, in order.
    if (!this.scheduled) this.runSlice();
  }

  private runSlice(): void {
    this.scheduled = false;
    if (this.closed) return;
    const started = this.now();
    const budget = this.options.sliceMs ?? SLICE_MS;
    let done = 0;
    while (this.next < this.operations.length && (done === 0 || this.now() - started < budget)) {
      const operation = this.operations[this.next++]!;
      done++;
      this.apply(operation);
      if (this.closed) return;
    }
    if (this.next < this.operations.length) {
      this.yieldSlice();
      return;
    }
    this.operations.length = 0;
    this.next = 0;
    // The activation costs Pi about what a registration does: it does not join a slice that used its budget.
    if (this.pendingActive.size + this.pendingReaching.size > 0 && done > 0 && this.now() - started >= budget) {
      this.yieldSlice();
      return;
    }
    this.applyActivations();
    this.wake();
  }

  /** The rest runs after a turn of the event loop (input, timers and I/O run there). */
  private yieldSlice(): void {
    this.releasePacing ??= (this.options.pacing ?? holdHeapPacing)();
    this.scheduled = true;
    setImmediate(() => this.runSlice());
  }

  private apply(operation: Operation): void {
    if (operation.kind === "register") {
      const { tool, activate } = operation;
      try {
        const definition = tool.definition();
        // Activated with its neighbours, by one setActiveTools, instead of each by its own registration
        // (a Pi without `defaultActive`, 0.84, activates it as it registers it, and the activation finds it active).
        this.pi.registerTool(activate ? { ...definition, defaultActive: false } : definition);
        this.options.onRegistered?.();
        if (activate) this.pendingActive.add(tool.name);
      } catch (error) {
        this.options.onError?.(tool.name, error);
      }
      return;
    }
    if (operation.kind === "activate") {
      for (const name of operation.names) this.pendingActive.add(name);
      for (const name of operation.reaching) this.pendingReaching.add(name);
      return;
    }
    // What was queued to be active before this deactivation becomes active first; then it goes.
    this.applyActivations();
    const gone = new Set(operation.names);
    const active = this.pi.getActiveTools();
    const kept = active.filter((name) => !gone.has(name));
    if (kept.length !== active.length) this.pi.setActiveTools(kept);
  }

  /** One setActiveTools for every tool waiting to be active (reaching tools only when Pi has them). */
  private applyActivations(): void {
    if (this.pendingActive.size === 0 && this.pendingReaching.size === 0) return;
    const active = new Set(this.pi.getActiveTools());
    const missing = [...this.pendingActive].filter((name) => !active.has(name));
    if (this.pendingReaching.size > 0) {
      const available = new Set(this.pi.getAllTools().map((tool) => tool.name));
      for (const name of this.pendingReaching) if (available.has(name) && !active.has(name)) missing.push(name);
    }
    this.pendingActive.clear();
    this.pendingReaching.clear();
    if (missing.length > 0) this.pi.setActiveTools([...active, ...missing]);
  }

  private endPacing(): void {
    this.releasePacing?.();
    this.releasePacing = undefined;
  }

  private wake(): void {
    this.endPacing();
    for (const resolve of this.waiters.splice(0)) resolve();
  }
}
