import type { ChildProcess } from "node:child_process";
import { isAbsolute, resolve } from "node:path";
import { StringDecoder } from "node:string_decoder";
import { deserializeMessage, ReadBuffer, specTypeSchemas, type JSONRPCMessage } from "@modelcontextprotocol/client";
import { StdioClientTransport, type StdioServerParameters } from "@modelcontextprotocol/client/stdio";
import { MessageTooLargeError, TransportClosedError } from "../../src/kernel/errors.ts";
import { MAX_MESSAGE_BYTES } from "../../src/kernel/limits.ts";
import { withDeadline } from "../../src/kernel/async.ts";
import type { Redactor } from "../../src/kernel/types.ts";
import { ProcessTree, TREE_VARIABLE } from "../../src/safety/process-tree.ts";
import { secretStartAtEnd, withoutLeadingFragment, withoutTrailingFragment } from "../../src/safety/text.ts";
import { releaseChild } from "./release.ts";
import { transportPlugin } from "./plugin.ts";

const NEWLINE = 0x0a;
/** How long a server that closed its stdout may take to exit before the connection is closed as lost. */
const STDOUT_EXIT_GRACE_MS = 500;
/** How long a server that never answered may take to end on SIGTERM before it is killed. */
const UNSTARTED_KILL_MS = 500;
/** How long a closed server (its stdin ended) may take to exit before its tree gets SIGTERM. */
export const STDIN_GRACE_MS = 1_500;
/** How long after SIGTERM before SIGKILL. With the scans of the tree, a close takes at most about 3.5 s, within the 5 s shutdown budget. */
export const TERM_GRACE_MS = 1_500;

/**
 * The SDK's stdio read buffer, in linear time. The SDK's own copies the whole
 * pending buffer on every chunk and searches it from the start (quadratic:
 * a 5 MB message took about 2 s); this one keeps the chunks of the line in
 * progress and looks for the newline only in what just arrived. A line over
 * `maxBytes` throws MessageTooLargeError (the SDK then reports it through
 * `onerror` and closes the transport) and nothing more is buffered.
 */
export class LinearReadBuffer extends ReadBuffer {
  private partial: Buffer[] = [];
  private partialBytes = 0;
  private lines: Buffer[] = [];
  private nextLine = 0;
  private overflowed = false;
  private readonly maxBytes: number;

  constructor(maxBytes: number) {
    super({ maxBufferSize: maxBytes });
    this.maxBytes = maxBytes;
  }

  override append(chunk: Buffer): void {
    if (this.overflowed) return; // the transport is closing: what the server still sends is dropped
    let start = 0;
    for (let newline = chunk.indexOf(NEWLINE); newline !== -1; newline = chunk.indexOf(NEWLINE, start)) {
      this.keep(chunk.subarray(start, newline));
      this.lines.push(this.partial.length === 1 ? this.partial[0]! : Buffer.concat(this.partial, this.partialBytes));
      this.partial = [];
      this.partialBytes = 0;
      start = newline + 1;
    }
    if (start < chunk.length) this.keep(chunk.subarray(start));
  }

  override readMessage(): JSONRPCMessage | null {
    while (this.nextLine < this.lines.length) {
      const line = this.lines[this.nextLine++]!;
      if (this.nextLine === this.lines.length) {
        this.lines = [];
        this.nextLine = 0;
      }
      try {
        return parseMessage(line.toString("utf8").replace(/\r$/, ""));
      } catch (error) {
        if (error instanceof SyntaxError) continue; // not JSON (stray output): skipped, as the SDK does
        throw error;
      }
    }
    return null;
  }

  override clear(): void {
    this.partial = [];
    this.partialBytes = 0;
    this.lines = [];
    this.nextLine = 0;
  }

  private keep(piece: Buffer): void {
    if (this.partialBytes + piece.length > this.maxBytes) {
      this.clear();
      this.overflowed = true;
      throw new MessageTooLargeError(this.maxBytes, "stdio", true);
    }
    if (piece.length === 0) return;
    this.partial.push(piece);
    this.partialBytes += piece.length;
  }
}

/**
 * One line as a JSON-RPC message, as the SDK's deserializeMessage reads it
 * (JSON.parse, then the SDK's JSON-RPC message schema).
 * The common answer, a result (`{jsonrpc: "2.0", id, result}` and nothing
 * else), is taken as parsed: the SDK's Zod parse of it accepts exactly that
 * shape and only copies it, apart from the result's `_meta`, which alone goes
 * through the SDK's schema (it drops a malformed serverInfo stamp, which
 * every 2026-07-28 result carries). The whole-message parse was about a tenth
 * of a call's CPU in Pi's process, for every answer. Anything else
 * (requests, notifications, errors) goes through the SDK's parse.
 */
export function parseMessage(line: string): JSONRPCMessage {
  const message: unknown = JSON.parse(line);
  if (!isResultShape(message)) return deserializeMessage(line); // read again: the SDK does not export its message schema
  const { result } = message;
  if (result._meta === undefined) return message as JSONRPCMessage;
  const meta = resultMeta.validate(result._meta);
  if (meta instanceof Promise || meta.issues) return deserializeMessage(line); // not an object: the SDK says why
  return { jsonrpc: message.jsonrpc, id: message.id, result: { ...result, _meta: meta.value } } as JSONRPCMessage;
}

const resultMeta = specTypeSchemas.ResultMetaObject["~standard"];

function isResultShape(message: unknown): message is { jsonrpc: "2.0"; id: string | number; result: Record<string, unknown> } {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return false;
  const { jsonrpc, id, result } = message as Record<string, unknown>;
  if (jsonrpc !== "2.0" || (typeof id !== "string" && !Number.isInteger(id))) return false;
  if (typeof result !== "object" || result === null || Array.isArray(result)) return false;
  let keys = 0;
  for (const _key in message) keys++;
  return keys === 3;
}

/**
 * The SDK's stdio transport with these changes, made through the seams it
 * has (its read buffer, its child process and the environment it is given),
 * not a protocol of our own:
 *
 * - Era probing: the SDK probes its own class on a short-lived sibling
 *   process (a second spawn per connect); a subclass is probed in place.
 * - Reading: linear, with the one message-size cap of every transport.
 * - A server that closes its stdout can no longer answer: the transport is
 *   closed (the SDK would wait for the process to exit), so the connection
 *   is lost at once instead of every request timing out.
 * - The server is a process tree (src/safety/process-tree.ts): closing ends
 *   all of it. Its stdin is closed, the server gets STDIN_GRACE_MS to exit,
 *   then every process of the tree gets SIGTERM and, TERM_GRACE_MS later,
 *   SIGKILL; when the server ends by itself (a crash), what it left running
 *   is ended the same way. Then the pipes are let go of, so a process that
 *   left the tree and still holds them cannot keep Pi running. (The SDK
 *   signals only the server process and waits for every pipe to close.)
 * - A server that never answered anything (still starting) is ended at once
 *   when the transport closes: SIGTERM, and SIGKILL after a short bound. A
 *   server still loading never notices its closed stdin, and every quit
 *   would wait for that.
 */
class InPlaceStdioTransport extends StdioClientTransport {
  /** How the process ended, once it has. */
  exit: string | undefined;
  /** Whether the server has written anything to its stdout (it has started, and may have work to finish). */
  private answered = false;

  private readonly stderrReader: StderrReader;
  private readonly stderrEnded: Promise<void>;
  private readonly tree: ProcessTree;

  constructor(server: StdioServerParameters, maxMessageBytes: number, stderrReader: StderrReader, tree = new ProcessTree()) {
    // The marker every process of the tree inherits, so it is found even after it left the process group.
    super({ ...server, env: { ...server.env, [TREE_VARIABLE]: tree.marker }, stderr: "pipe" });
    this.tree = tree;
    this.sdkInternals()._readBuffer = new LinearReadBuffer(maxMessageBytes);
    this.stderrReader = stderrReader;
    const stderr = this.stderr;
    stderr?.on("data", (chunk: Buffer) => stderrReader.read(chunk));
    this.stderrEnded = new Promise((resolve) => stderr?.once("end", resolve));
  }

  override async start(): Promise<void> {
    await super.start();
    const child = this.sdkInternals()._process;
    if (child?.pid !== undefined) this.tree.adopt(child.pid);
    // The server ended by itself (all its pipes closed): what it left running is ended too.
    child?.once("close", () => {
      this.tree.end({ politeMs: 0, termMs: TERM_GRACE_MS }).catch(() => undefined);
    });
    // The process's exit is what a failure's cause needs.
    child?.once("exit", (code, signal) => {
      this.exit = signal ? `was stopped by signal ${signal}` : `exited with code ${code}`;
      // Node ends the server's stdin when its process exits: nothing can be sent any more. If its output is still
      // open a moment later (what it left running holds it: a forked helper), the connection is lost: the transport
      // closes, and what the server left running is ended at once (nobody is left to stop politely).
      const timer = setTimeout(() => {
        if (this.sdkInternals()._process !== child) return; // closing already, or closed
        this.onerror?.(new TransportClosedError(`the server process ${this.exit}; what it left running holds its output open`));
        this.tree.end({ politeMs: 0, termMs: TERM_GRACE_MS }).catch(() => undefined);
        this.close().catch(() => undefined);
      }, STDOUT_EXIT_GRACE_MS);
      timer.unref();
      child.once("close", () => clearTimeout(timer));
    });
    child?.stdout?.once("data", () => {
      this.answered = true;
    });
    child?.stdout?.once("end", () => {
      // A process that is exiting closes its stdout first: give it a moment to exit, which the SDK reports itself.
      const timer = setTimeout(() => {
        // Closing already (the SDK's close() lets go of the child first), or exited meanwhile.
        if (this.sdkInternals()._process !== child || child.exitCode !== null || child.signalCode !== null) return;
        this.onerror?.(new TransportClosedError("the server closed its standard output"));
        this.close().catch(() => undefined);
      }, STDOUT_EXIT_GRACE_MS);
      timer.unref();
      child.once("exit", () => clearTimeout(timer));
    });
  }

  override async close(): Promise<void> {
    const internals = this.sdkInternals();
    const child = internals._process;
    const running = child !== undefined && child.exitCode === null && child.signalCode === null;
    const rootExited = running ? new Promise((resolve) => child.once("exit", resolve)) : undefined;
    // What the SDK's close does first, without its signals to the server process alone: nothing is sent from now on,
    // and the server's stdin is ended (a server that exits then takes its tree along, or leaves it to the signals).
    internals._process = undefined;
    try {
      child?.stdin?.end();
    } catch {
      // the pipe broke already
    }
    await this.tree.end(
      running && !this.answered
        ? { politeMs: 0, termMs: UNSTARTED_KILL_MS, ...(rootExited && { rootExited }) }
        : { politeMs: STDIN_GRACE_MS, termMs: TERM_GRACE_MS, ...(rootExited && { rootExited }) },
    );
    if (child) await releaseChild(child, this.stderr);
    internals._readBuffer.clear();
    // What the process wrote last is in its log before anything that follows (the next attempt's separator).
    // Bounded: a process that left the tree may hold the pipe open.
    await withDeadline(this.stderrEnded, STDERR_END_GRACE_MS, () => new Error("stderr still open")).catch(() => undefined);
    this.stderrReader.end();
  }

  /** The SDK's (TypeScript-private) read buffer and child process: the seams this class uses (its close() is replaced, see close). */
  private sdkInternals(): { _readBuffer: ReadBuffer; _process?: ChildProcess } {
    return this as unknown as { _readBuffer: ReadBuffer; _process?: ChildProcess };
  }
}

/** How long a closed server's stderr may stay open (a grandchild holding it) before its log is finished without it. */
const STDERR_END_GRACE_MS = 1_000;

/** How much of a server's newest stderr is kept for a failure's cause. */
const STDERR_TAIL_BYTES = 4096;

/**
 * A server's stderr on its way into the retained log and a failure's cause.
 * What could be the beginning of a secret at the end of a line the server has
 * not finished is held back until the rest arrives (then the whole secret is
 * redacted) or the stream ends (then it shows as redacted): neither the log
 * nor a cause ever quotes half a secret. A stream that ends inside a line
 * gets its line ended, so what is logged next starts on a line of its own.
 */
export class StderrReader {
  private readonly decoder = new StringDecoder("utf8");
  private held = "";
  private endsLine = true;
  private tailText = "";

  constructor(
    private readonly write: (text: string) => void,
    private readonly redact: Redactor,
  ) {}

  /** The end of what was passed on, raw (the host redacts, strips and cuts it). */
  get tail(): string {
    return this.tailText;
  }

  read(chunk: Buffer): void {
    const text = this.held + this.decoder.write(chunk);
    const start = secretStartAtEnd(text, this.redact);
    this.held = text.slice(start);
    this.pass(text.slice(0, start));
  }

  end(): void {
    const rest = this.held + this.decoder.end();
    this.held = "";
    this.pass(withoutTrailingFragment(rest, this.redact));
    if (!this.endsLine) this.pass("\n");
  }

  private pass(text: string): void {
    if (text === "") return;
    this.write(text);
    this.endsLine = text.endsWith("\n");
    // A tail cut inside a secret would keep its end, which no redaction recognises: that fragment goes now.
    const joined = this.tailText + text;
    this.tailText = joined.length > STDERR_TAIL_BYTES ? withoutLeadingFragment(joined.slice(-STDERR_TAIL_BYTES), this.redact) : joined;
  }
}

/**
 * Local servers: the SDK's stdio transport. The child gets the SDK's minimal
 * environment plus the configured one (never Pi's whole environment), and its
 * stderr always drains into the server's retained log, never the terminal.
 */
export const stdioTransportPlugin = () =>
  transportPlugin("transport-stdio", "stdio", (definition, context) => {
    const cwd =
      definition.cwd === undefined
        ? context.host.cwd
        : isAbsolute(definition.cwd)
          ? definition.cwd
          : resolve(context.host.cwd, definition.cwd);
    const stderr = new StderrReader((text) => context.log(text), context.host.redact);
    const transport = new InPlaceStdioTransport(
      { command: definition.command, args: [...definition.args], env: { ...definition.environment }, cwd },
      MAX_MESSAGE_BYTES,
      stderr,
    );
    transport.stderr?.on("end", () => stderr.end());
    transport.stderr?.on("error", (error: Error) => context.log(`[pi-mcp] reading the server's stderr failed: ${error.message}\n`));
    return {
      transport,
      evidence: () => ({ ...(transport.exit && { exit: transport.exit }), ...(stderr.tail && { stderrTail: stderr.tail }) }),
    };
  });
