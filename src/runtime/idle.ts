import { inBackground } from "../kernel/async.ts";

/** What a lazy server's idle countdown reads of its connection. */
export interface IdleSeat {
  /** Whether the countdown may run now: a lazy server, connected, owned by a session, no tool call in flight. */
  mayCountDown(): boolean;
  /** Whether the server is still unused when the time runs out: connected, no tool call in flight. */
  unused(): boolean;
  /** How long the server may stay unused (its `idleTimeoutMs`). */
  timeoutMs(): number;
  /** The time ran out: the process or connection goes (the catalog stays). */
  close(): Promise<void>;
  /** A failure of that close, for the server's log. */
  report(error: unknown): void;
}

/**
 * A lazy server's countdown to closing while nothing uses it: use (a tool
 * call, a request) stops it, and it counts again from the use's end. It never
 * keeps Pi alive.
 */
export class IdleCountdown {
  private timer: NodeJS.Timeout | undefined;
  /** Requests (prompts, resources, completion) in flight: the server is not idle meanwhile. */
  private requests = 0;

  constructor(private readonly seat: IdleSeat) {}

  /** Counts down again from now, when the server may idle. */
  arm(): void {
    this.disarm();
    if (this.requests > 0 || !this.seat.mayCountDown()) return;
    const timer = setTimeout(
      () =>
        inBackground(
          () => this.expire(timer),
          (error) => this.seat.report(error),
        ),
      this.seat.timeoutMs(),
    );
    timer.unref?.(); // an idle countdown never keeps Pi alive
    this.timer = timer;
  }

  disarm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Marks a request in flight; returns the function that ends it. */
  inUse(): () => void {
    this.requests++;
    this.disarm();
    return () => {
      this.requests--;
      this.arm();
    };
  }

  private async expire(timer: NodeJS.Timeout): Promise<void> {
    if (this.timer !== timer || this.requests > 0 || !this.seat.unused()) return;
    this.timer = undefined;
    await this.seat.close();
  }
}
