// Instruction Snapshot eligibility follows completed tool catalog
// synchronization: a server's part of the snapshot changes exactly when its
// tools reach Pi or are deactivated (after the 50 ms debounce), never in between.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { fixtureServer, startHost, stopAllHosts, until, type TestHost } from "../helpers/host.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "pi-mcp-eligibility-"));
});
afterEach(async () => {
  await stopAllHosts();
  await rm(dir, { recursive: true, force: true });
});

interface Sample {
  readonly when: string;
  /** The server's part is in the snapshot. */
  readonly inSnapshot: boolean;
  /** Its tools are active in Pi (the sink). */
  readonly toolsActive: boolean;
}

/**
 * Samples the snapshot and the sink: on every status change (synchronously),
 * after every sink call, and on every event-loop turn while `running`, so the
 * 50 ms between a catalog change and its synchronization is seen.
 */
function sampler(
  h: TestHost,
  inSnapshot: () => boolean,
  toolsActive: () => boolean,
): { samples: Sample[]; take(when: string): void; stop(): void } {
  const samples: Sample[] = [];
  let running = true;
  const take = (when: string) => samples.push({ when, inSnapshot: inSnapshot(), toolsActive: toolsActive() });
  const turn = () => {
    if (!running) return;
    take("turn");
    setImmediate(turn);
  };
  setImmediate(turn);
  // A sync registers, then deactivates, in one synchronous step: sampled once that step is over.
  const { register, deactivate } = h.sink;
  h.sink.register = (tools) => {
    register.call(h.sink, tools);
    queueMicrotask(() => take("register"));
  };
  h.sink.deactivate = (names) => {
    deactivate.call(h.sink, names);
    queueMicrotask(() => take("deactivate"));
  };
  return { samples, take, stop: () => (running = false) };
}

it("a server's instructions join the snapshot as its tools reach Pi and leave with their debounced deactivation, not when the connection drops", async () => {
  const instructions = join(dir, "instructions.txt");
  const fail = join(dir, "refuse");
  await writeFile(instructions, "Witness guidance.");
  let watch: ReturnType<typeof sampler> | undefined;
  const states: { state: string; inSnapshot: boolean; toolsActive: boolean }[] = [];
  const h: TestHost = await startHost(
    { w: fixtureServer("witness", { FIXTURE_INSTRUCTIONS_FILE: instructions, FIXTURE_FAIL_WHILE: fail }) },
    {
      retry: { maxRetries: 0 },
      start: false,
      events: {
        statusChanged: () => {
          watch?.take("status");
          states.push({ state: h.host.server("w")!.state, ...watch!.samples.at(-1)! });
        },
      },
    },
  );
  const inSnapshot = () => h.host.systemPrompt("BASE").includes("Witness guidance.");
  const toolsActive = () => h.sink.active.has("mcp__w__count");
  watch = sampler(h, inSnapshot, toolsActive);
  h.host.start();
  await h.waitForTools(4, { server: "w" });
  expect(inSnapshot()).toBe(true);

  await writeFile(fail, ""); // the server will not come back
  await h.call("mcp__w__restart", {});
  await h.waitForState("w", "failed");
  await until(
    () => !toolsActive(),
    30_000,
    () => "the tools were never deactivated",
  );
  watch.stop();

  // While the connection was down but its tools not yet deactivated, the instructions stayed.
  const down = states.filter((entry) => entry.state === "retrying" || entry.state === "failed");
  expect(down.length).toBeGreaterThan(0);
  expect(down[0]).toMatchObject({ inSnapshot: true, toolsActive: true });
  expect(inSnapshot()).toBe(false);
  // And at no moment did the snapshot disagree with Pi's tools.
  expect(watch.samples.filter((sample) => sample.inSnapshot !== sample.toolsActive)).toEqual([]);
  expect(watch.samples.some((sample) => sample.when === "deactivate" && !sample.inSnapshot)).toBe(true);
});

it("the exposure line follows the completed sync: a deferred tool the server withdrew keeps its line until that tool is deactivated", async () => {
  const line = "are not declared to you: find and load them with tool_search";
  const h = await startHost({ churn: fixtureServer("list-changed", {}, { toolExposure: { gen_0: "deferred" } }) }, { start: false });
  const inSnapshot = () => h.host.systemPrompt("BASE").includes(line);
  const toolsActive = () => h.sink.active.has("mcp__churn__gen_0");
  const watch = sampler(h, inSnapshot, toolsActive);
  h.host.start();
  await h.waitForTools(3, { server: "churn" });
  expect(inSnapshot()).toBe(true);

  await h.call("mcp__churn__churn", { count: 1 }); // gen_0 becomes gen_1, which is direct
  await until(
    () => !toolsActive() && h.sink.active.has("mcp__churn__gen_1"),
    30_000,
    () => [...h.sink.active].join(", "),
  );
  watch.stop();
  expect(inSnapshot()).toBe(false);
  expect(watch.samples.filter((sample) => sample.inSnapshot !== sample.toolsActive)).toEqual([]);
  // The 50 ms between the new list and its synchronization were observed (otherwise this proves nothing).
  const lastWithLine = watch.samples.findLastIndex((sample) => sample.inSnapshot);
  expect(watch.samples.slice(0, lastWithLine).filter((sample) => sample.when === "turn").length).toBeGreaterThan(0);
});
