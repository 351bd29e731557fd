/**
 * Pi's tool registrations in time slices (src/pi/registration-queue.ts),
 * against a fake Pi whose every registerTool costs time on a fake clock the
 * way Pi 1.6's does (it rebuilds the whole registry: the more tools, the
 * longer). What is checked is the order, the slices and the activations;
 * how long a real Pi's event loop stalls is test/e2e/registration-stall.test.ts.
 */
import type { ToolDefinition } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { RegistrationQueue, SLICE_MS, type QueuedTool } from "../../src/pi/registration-queue.ts";

/** A Pi of registered tools and an active set; each registration costs `costPerTool` ms per registered tool on `clock`. */
function fakePi(options: { costPerTool?: number; refuse?: string } = {}) {
  const clock = { now: 0 };
  const tools = new Map<string, ToolDefinition>();
  let active: string[] = ["read"];
  const events: string[] = [];
  /** Slices: how much clock time passed between two yields (a slice ends when the queue returns to the event loop). */
  const pi = {
    registerTool(definition: ToolDefinition) {
      if (definition.name === options.refuse) throw new Error("Pi refuses this one");
      clock.now += (options.costPerTool ?? 0) * (tools.size + 1);
      tools.set(definition.name, definition);
      // Pi activates a direct tool as it registers it, unless it says defaultActive: false.
      const { defaultActive, exposure } = definition as { defaultActive?: boolean; exposure?: string };
      if (defaultActive !== false && (exposure ?? "direct") === "direct" && !active.includes(definition.name)) active.push(definition.name);
      events.push(`register ${definition.name}`);
    },
    getActiveTools: () => [...active],
    setActiveTools(names: string[]) {
      // Pi rebuilds its registry for a new active set too: it costs what one more registration would.
      clock.now += (options.costPerTool ?? 0) * (tools.size + 1);
      active = names.filter((name) => name === "read" || name === "tool_search" || tools.has(name));
      events.push(`active ${active.length}`);
    },
    getAllTools: () => [...tools.keys(), "tool_search"].map((name) => ({ name })),
  };
  return { pi: pi as never, clock, tools, events, active: () => active };
}

/** Definitions as the queue takes them (each made when its slice registers it). */
const queued = (definitions: readonly ToolDefinition[]): QueuedTool[] =>
  definitions.map((made) => ({ name: made.name, definition: () => made }));

const definition = (name: string): ToolDefinition =>
  ({ name, label: name, description: name, parameters: { type: "object" }, execute: async () => ({ content: [], details: {} }) }) as never;
const names = (count: number, prefix = "t") => Array.from({ length: count }, (_, i) => `${prefix}${i}`);

/** Lets the queue's scheduled slices run (each yields with setImmediate). */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("Pi's tool registrations in time slices", () => {
  it("registers a batch that fits in one slice before register returns, with one activation", () => {
    const fake = fakePi();
    const queue = new RegistrationQueue(fake.pi, { now: () => fake.clock.now });
    queue.register(queued(names(5).map(definition)), names(5));
    expect(fake.tools.size).toBe(5);
    expect(fake.active()).toEqual(["read", ...names(5)]);
    // Registered inactive (defaultActive: false), then one setActiveTools for the five.
    expect(fake.events.filter((event) => event.startsWith("active"))).toEqual(["active 6"]);
    expect(queue.busy).toBe(false);
  });

  it("never runs longer than a slice (plus the registration under way) before it yields, and gets everything registered and active in order", async () => {
    const fake = fakePi({ costPerTool: 0.01 }); // tool n costs n × 0.01 ms: 1,000 tools take ~5 s of fake time
    const queue = new RegistrationQueue(fake.pi, { now: () => fake.clock.now });
    const all = names(1_000);
    queue.register(queued(all.map(definition)), all);
    let longest = fake.clock.now; // the first slice ran within register
    let slices = 1;
    while (queue.busy) {
      const before = fake.clock.now;
      await turn(); // the next slice runs here
      longest = Math.max(longest, fake.clock.now - before);
      slices++;
    }
    expect(slices).toBeGreaterThan(100);
    // The longest slice: the budget plus one call of Pi's under way (the last registration, or the activation
    // after it, cost ~10 ms here): the final activation never joins a slice that has used its budget.
    expect(longest).toBeLessThanOrEqual(SLICE_MS + 10.02);
    expect([...fake.tools.keys()]).toEqual(all);
    expect(fake.active()).toEqual(["read", ...all]);
    // Registered inactive while the queue lasted (each registration's cost does not grow with active tools), activated once at the end.
    expect(fake.events.filter((event) => event.startsWith("active"))).toEqual([`active ${all.length + 1}`]);
    expect(fake.events.at(-1)).toBe(`active ${all.length + 1}`);
  });

  it("makes one call of Pi's per slice when each costs more than a slice (Pi's registry of tens of thousands of tools): no slice adds an activation to a registration", async () => {
    const fake = fakePi({ costPerTool: 1 }); // tool n costs n ms: from the 26th on, one registration outlasts a slice
    const queue = new RegistrationQueue(fake.pi, { now: () => fake.clock.now });
    const all = names(200);
    queue.register(queued(all.map(definition)), all);
    let longest = 0;
    while (queue.busy) {
      const before = fake.clock.now;
      await turn();
      longest = Math.max(longest, fake.clock.now - before);
    }
    expect(fake.active()).toEqual(["read", ...all]);
    // The dearest single call: the activation with all 200 tools registered (201 ms); a registration and an
    // activation in one slice would be twice that.
    expect(longest).toBeLessThanOrEqual(201);
  });

  it("keeps the order of operations: a deactivation queued behind registrations applies after them", async () => {
    const fake = fakePi({ costPerTool: 0.5 });
    const queue = new RegistrationQueue(fake.pi, { now: () => fake.clock.now });
    queue.register(queued(names(200).map(definition)), names(200));
    expect(queue.busy).toBe(true);
    queue.deactivate(["t3", "t150"]);
    queue.register(queued([definition("late")]), ["late"]);
    await queue.idle();
    expect(fake.active()).not.toContain("t3");
    expect(fake.active()).not.toContain("t150");
    expect(fake.active()).toContain("t199");
    expect(fake.active().at(-1)).toBe("late");
    expect(fake.events.at(-1)).toBe(`active ${fake.active().length}`);
  });

  it("activates the tool that reaches deferred tools only when Pi has it, and adopts tools Pi already has", () => {
    const fake = fakePi();
    const queue = new RegistrationQueue(fake.pi, { now: () => fake.clock.now });
    queue.register(queued([{ ...definition("deferred1"), exposure: "deferred" } as ToolDefinition]), [], ["tool_search", "codemode"]);
    expect(fake.active()).toEqual(["read", "tool_search"]);
    queue.activate(["deferred1"]);
    expect(fake.active()).toEqual(["read", "tool_search", "deferred1"]);
  });

  it("goes on past a tool Pi refuses, and says which", () => {
    const fake = fakePi({ refuse: "t1" });
    const refused: string[] = [];
    const queue = new RegistrationQueue(fake.pi, { now: () => fake.clock.now, onError: (name) => refused.push(name) });
    queue.register(queued(names(3).map(definition)), names(3));
    expect(refused).toEqual(["t1"]);
    expect(fake.active()).toEqual(["read", "t0", "t2"]);
  });

  it("makes every tool registered so far active on demand while the rest registers (an agent run about to start)", async () => {
    const fake = fakePi({ costPerTool: 0.5 });
    const queue = new RegistrationQueue(fake.pi, { now: () => fake.clock.now });
    queue.register(queued(names(300).map(definition)), names(300));
    await turn();
    const registered = [...fake.tools.keys()];
    expect(registered.length).toBeGreaterThan(0);
    expect(registered.length).toBeLessThan(300);
    expect(fake.active()).toEqual(["read"]); // nothing is activated while the queue lasts
    queue.activateRegistered();
    expect(fake.active()).toEqual(["read", ...registered]);
    await queue.idle();
    expect(fake.active()).toEqual(["read", ...names(300)]);
  });

  it("drops what is still queued when closed (the session ended), and idle resolves", async () => {
    const fake = fakePi({ costPerTool: 0.5 });
    const queue = new RegistrationQueue(fake.pi, { now: () => fake.clock.now });
    queue.register(queued(names(300).map(definition)), names(300));
    const registered = fake.tools.size;
    expect(registered).toBeLessThan(300);
    const idle = queue.idle();
    queue.close();
    await idle;
    await turn();
    await turn();
    expect(fake.tools.size).toBe(registered);
    queue.register(queued([definition("after")]), ["after"]);
    expect(fake.tools.has("after")).toBe(false);
  });
});

describe("heap pacing while registrations span slices", () => {
  /** Counts the holds the queue takes and releases. */
  function pacingSpy() {
    const spy = { held: 0, taken: 0 };
    const pacing = () => {
      spy.held++;
      spy.taken++;
      let released = false;
      return () => {
        if (!released) spy.held--;
        released = true;
      };
    };
    return { spy, pacing };
  }

  it("is not held for a batch that fits in one slice", () => {
    const fake = fakePi();
    const { spy, pacing } = pacingSpy();
    const queue = new RegistrationQueue(fake.pi, { now: () => fake.clock.now, pacing });
    queue.register(queued(names(5).map(definition)), names(5));
    expect(spy.taken).toBe(0);
  });

  it("is held once from the first slice that yields until the queue drains", async () => {
    const fake = fakePi({ costPerTool: 0.5 });
    const { spy, pacing } = pacingSpy();
    const queue = new RegistrationQueue(fake.pi, { now: () => fake.clock.now, pacing });
    queue.register(queued(names(300).map(definition)), names(300));
    expect(queue.busy).toBe(true);
    expect(spy.held).toBe(1);
    await turn();
    expect(spy.held).toBe(1);
    await queue.idle();
    expect(fake.tools.size).toBe(300);
    expect(spy).toEqual({ held: 0, taken: 1 });
  });

  it("is released when the queue is closed with registrations still queued", () => {
    const fake = fakePi({ costPerTool: 0.5 });
    const { spy, pacing } = pacingSpy();
    const queue = new RegistrationQueue(fake.pi, { now: () => fake.clock.now, pacing });
    queue.register(queued(names(300).map(definition)), names(300));
    expect(spy.held).toBe(1);
    queue.close();
    expect(spy).toEqual({ held: 0, taken: 1 });
  });
});
