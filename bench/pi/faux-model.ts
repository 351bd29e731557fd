/**
 * The offline model of the bench's Pi extensions: a faux provider `name`
 * with one model `faux-1`, every request answered by `respond` (pi-ai's faux
 * core). `onRequest` sees each request as Pi makes it, before it is answered.
 */
import * as ai from "@earendil-works/pi-ai";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export type FauxContext = { messages: { role: string; isError?: boolean; content?: unknown }[]; tools?: { name: string }[] };

export function registerBenchModel(
  pi: ExtensionAPI,
  name: string,
  respond: (context: FauxContext) => unknown,
  options: { readonly onRequest?: (context: FauxContext) => void; readonly contextWindow?: number } = {},
): void {
  const core = ai.createFauxCore({ api: name, provider: name, models: [{ id: "faux-1", name: "Faux 1" }] });
  const streamSimple = (model: unknown, context: unknown, streamOptions?: unknown) => {
    options.onRequest?.(context as FauxContext);
    core.appendResponses([respond] as never);
    return core.streamSimple(model as never, context as never, streamOptions as never);
  };
  pi.registerProvider(name, {
    name: `Bench ${name}`,
    api: name,
    baseUrl: "http://localhost:0",
    apiKey: "faux-key",
    streamSimple: streamSimple as never,
    models: [
      {
        id: "faux-1",
        name: "Faux 1",
        reasoning: false,
        input: ["text"],
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
        contextWindow: options.contextWindow ?? 128000,
        maxTokens: 16384,
      },
    ],
  } as never);
}
