/**
 * A catalog of thousands of tools does not freeze Pi: a real Pi 1.6 TUI in
 * tmux with a server of 6,000 tools (`many-tools`), and a probe extension
 * (test/e2e/fixtures/stall-probe.ts) that watches Pi's event loop from
 * inside, as the TUI feels it. While the tools register, the editor takes
 * typing and Ctrl+C clears it, and no block of work on Pi's main thread
 * lasts longer than 100 ms (the probe's CPU time within one gap of its 5 ms
 * timer: on two busy cores the wall-clock gaps also hold the time Pi waited
 * for a core). Before registrations were sliced, the whole catalog was one
 * block (tens of seconds for 6,000 tools).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { editorArea, startPiTui, type PiTui } from "../helpers/tui.ts";
import { eventually } from "../helpers/wait.ts";
import { FAUX_PROVIDER, makePiHome, NODE, REPO_ROOT, type PiHome } from "./harness/pi.ts";
import type { StallReport } from "./fixtures/stall-probe.ts";

const TOOLS = 6_000;
/** The longest block of work on Pi's main thread while tools register (ms of CPU). */
const BOUND_MS = 100;
const PROBE = join(REPO_ROOT, "test/e2e/fixtures/stall-probe.ts");
const TYPED = "typed while the tools register";

let home: PiHome;
let pi: PiTui;
let report: string;

beforeAll(async () => {
  home = await makePiHome();
  const many = {
    command: NODE,
    args: [join(REPO_ROOT, "test/fixtures/servers/many-tools.mjs")],
    environment: { FIXTURE_TOOLS: String(TOOLS) },
  };
  writeFileSync(
    join(home.agentDir, "settings.json"),
    JSON.stringify({ mcp: { connectTimeoutMs: 60_000, exposure: "direct", servers: { many } } }),
  );
  report = join(home.home, "stall.json");
  pi = await startPiTui({
    home,
    args: ["-e", REPO_ROOT, "-e", PROBE, "-e", FAUX_PROVIDER, "--provider", "faux", "--model", "faux-1"],
    env: { STALL_PROBE_TOOLS: String(TOOLS), STALL_PROBE_OUT: report },
    columns: 120,
  });
});

afterAll(async () => {
  await pi?.stop();
  await home?.cleanup();
});

/** The probe's footer count, `stall-probe: [registering, ]<active>/<expected>`. */
const shownCount = (screen: string) => Number(/stall-probe: (?:registering, )?(\d+)\//.exec(screen)?.[1] ?? -1);

it("a 6,000-tool server registers with no block over 100 ms on Pi's event loop, and the editor takes typing and Ctrl+C meanwhile", async () => {
  // Registration under way: the first tools have reached Pi, not all are active.
  await pi.waitFor("the first tools to be registered", (screen) => screen.includes("stall-probe: registering, "), { timeoutMs: 240_000 });
  expect(shownCount(pi.screen())).toBeLessThan(TOOLS);

  pi.keys("-l", TYPED);
  await pi.waitFor("the typed text in the editor", (screen) => editorArea(screen).includes(TYPED), { timeoutMs: 60_000 });
  pi.keys("C-c");
  await pi.waitFor("Ctrl+C to clear the editor", (screen) => !editorArea(screen).includes(TYPED), { timeoutMs: 60_000 });
  const handledAt = Date.now();

  const done = await eventually(
    async () => (existsSync(report) ? (JSON.parse(readFileSync(report, "utf8")) as StallReport) : undefined),
    900_000,
    () => `waiting for the probe's report; screen:\n${pi.screen()}`,
  );
  // The keys were handled while the tools registered, not after.
  expect(done.doneAt).toBeGreaterThan(handledAt);
  expect(done.registeringMs).toBeGreaterThan(0);
  expect(done.maxBlockCpuMs, JSON.stringify(done)).toBeLessThanOrEqual(BOUND_MS);
  await pi.waitFor("every tool active", (screen) => shownCount(screen) === TOOLS);
}, 1_000_000);
