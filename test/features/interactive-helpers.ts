// Stand-ins for the sampling and elicitation tests: a scripted ModelService, scripted
// dialogs (a UiService), a spy on the request handlers a client registers, and a
// poll for the `interactive` fixture's background request.
import { STAGE, type KernelPlugin } from "../../src/kernel/kernel.ts";
import type { ModelService, SamplingRequest, SamplingResult, UiService } from "../../src/kernel/services.ts";
import { until, type TestHost } from "../helpers/host.ts";

export type Answer = (request: SamplingRequest, signal: AbortSignal) => SamplingResult | Promise<SamplingResult>;

export const HELLO: Answer = () => ({ model: "fake-1", content: [{ type: "text", text: "hello" }], stopReason: "endTurn" });

export type FakeModel = ModelService & {
  readonly requests: SamplingRequest[];
  readonly signals: AbortSignal[];
  /** Clears what was recorded and answers with `answer` from now on (one host can serve several tests). */
  script(answer: Answer): void;
};

/** A ModelService that records every request and answers by script. */
export function fakeModel(answer: Answer = HELLO): FakeModel {
  const requests: SamplingRequest[] = [];
  const signals: AbortSignal[] = [];
  let current = answer;
  return {
    requests,
    signals,
    script(next) {
      requests.length = 0;
      signals.length = 0;
      current = next;
    },
    async complete(request, signal) {
      requests.push(request);
      signals.push(signal);
      return current(request, signal);
    },
  };
}

/** Until the signal aborts. */
export const hang: Answer = (_request, signal) =>
  new Promise((_, reject) => signal.addEventListener("abort", () => reject(new Error("aborted")), { once: true }));

/**
 * Records the request methods every client registers a handler for, and each
 * request that reached one (`server method`, as it arrives: before the handler
 * runs). Runs before the built-in plugins.
 */
export function handlerSpy(): { plugin: KernelPlugin; methods: string[]; received: string[] } {
  const methods: string[] = [];
  const received: string[] = [];
  const plugin: KernelPlugin = {
    name: "handler-spy",
    apply(kernel) {
      kernel.hooks.clientCreated.tap({ name: "handler-spy", stage: STAGE.BEFORE_BUILTIN }, (connection) => {
        type Handler = (...args: unknown[]) => unknown;
        const client = connection.client as unknown as {
          setRequestHandler: (method: string, handler: Handler, ...rest: unknown[]) => unknown;
        };
        const original = client.setRequestHandler.bind(client);
        client.setRequestHandler = (method, handler, ...rest) => {
          methods.push(method);
          const counted: Handler = (...args) => {
            received.push(`${connection.server.name} ${method}`);
            return handler(...args);
          };
          return original(method, counted, ...rest);
        };
      });
    },
  };
  return { plugin, methods, received };
}

/** Records every request each client sends (`server method`), as it is sent. Runs before the built-in plugins. */
export function requestSpy(): { plugin: KernelPlugin; sent: string[] } {
  const sent: string[] = [];
  const plugin: KernelPlugin = {
    name: "request-spy",
    apply(kernel) {
      kernel.hooks.clientCreated.tap({ name: "request-spy", stage: STAGE.BEFORE_BUILTIN }, (connection) => {
        const client = connection.client as unknown as { request: (request: { method: string }, ...rest: unknown[]) => unknown };
        const original = client.request.bind(client);
        client.request = (request, ...rest) => {
          sent.push(`${connection.server.name} ${request.method}`);
          return original(request, ...rest);
        };
      });
    },
  };
  return { plugin, sent };
}

/**
 * What the fixture's background request got, read from its stderr line in the
 * server's retained log (polling with a tool call would put a call in flight).
 */
export async function backgroundOutcome(h: TestHost, server = "interactive"): Promise<string> {
  const line = () => /^background: (.*)$/m.exec(h.host.server(server)!.log.text())?.[1];
  await until(
    () => line() !== undefined,
    15_000,
    () => h.host.server(server)!.log.text(),
  );
  return line()!;
}

export interface Dialog {
  readonly method: "input" | "select" | "confirm";
  readonly title: string;
  /** input: the placeholder; confirm: the message. */
  readonly text?: string;
  readonly options?: readonly string[];
}

export type Reply = string | boolean | undefined | Promise<string | boolean | undefined>;

export type DialogReply = (dialog: Dialog, signal: AbortSignal | undefined) => Reply;

export type FakeUi = UiService & {
  readonly dialogs: Dialog[];
  readonly notices: string[];
  /** Clears what was recorded and answers with `reply` from now on. */
  script(reply: DialogReply): void;
};

/** Dialogs that record what they were asked and answer by script. */
export function fakeUi(reply: DialogReply): FakeUi {
  const dialogs: Dialog[] = [];
  const notices: string[] = [];
  let current = reply;
  const ask = async (dialog: Dialog, signal?: AbortSignal) => {
    dialogs.push(dialog);
    return current(dialog, signal);
  };
  return {
    dialogs,
    notices,
    script(next) {
      dialogs.length = 0;
      notices.length = 0;
      current = next;
    },
    input: async (title, placeholder, signal) =>
      (await ask({ method: "input", title, ...(placeholder !== undefined && { text: placeholder }) }, signal)) as string | undefined,
    select: async (title, options, signal) => (await ask({ method: "select", title, options }, signal)) as string | undefined,
    confirm: async (title, message, signal) => (await ask({ method: "confirm", title, text: message }, signal)) === true,
    notify: (text) => void notices.push(text),
  };
}

/** A person who says yes, keeps every default (empty input, the first option) and types `typed[field]` where given. */
export function person(typed: Record<string, string | string[]> = {}) {
  const queues = new Map(Object.entries(typed).map(([field, value]) => [field, Array.isArray(value) ? [...value] : [value]]));
  return (dialog: Dialog): Reply => {
    if (dialog.method === "confirm") return true;
    if (dialog.method === "select") return dialog.options![0];
    const field = [...queues.keys()].find((name) => dialog.title.includes(`asks: ${name}`));
    return field ? (queues.get(field)!.shift() ?? "") : "";
  };
}
