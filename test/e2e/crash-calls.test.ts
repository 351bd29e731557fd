// A real Pi calling a tool over and over while its server is killed again and
// again: every call is answered, the calls made while the server reconnects
// run once it is back, no call is told its tool is "not offered any more",
// and a call the kill interrupted says so and names the retry in progress.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { fixturePath } from "../helpers/servers.ts";
import { until } from "../helpers/wait.ts";
import { NODE, REPO_ROOT, runPi, usePiHome, type FauxStep } from "./harness/pi.ts";

const home = usePiHome();

const CALLS = 150;
/** The server is killed once it has answered this many calls since it started. */
const CALLS_PER_LIFE = 20;

const lines = (file: string) => (existsSync(file) ? readFileSync(file, "utf8").trim().split("\n").filter(Boolean) : []);

it(`answers all ${CALLS} calls of a real Pi while the server is killed every ${CALLS_PER_LIFE} calls, and only a call a kill interrupted fails, saying why`, async () => {
  const starts = join(home.home, "starts.log");
  const calls = join(home.home, "calls.log");
  const server = { command: NODE, args: [fixturePath("crash")], environment: { FIXTURE_START_LOG: starts, FIXTURE_CALL_LOG: calls } };
  // A kill within 30 s of connecting counts as one more attempt of the run of retries: enough of them for every kill.
  await home.writeSettings({ mcp: { retry: { maxRetries: 12, initialDelayMs: 250 }, servers: { e: server } } });
  const script: FauxStep[] = [
    ...Array.from({ length: CALLS }, () => ({ toolCall: { name: "mcp__e__ok", arguments: {} } })),
    { text: "done" },
  ];
  const run = runPi({
    home: home.home,
    cwd: home.cwd,
    extensions: [REPO_ROOT],
    args: ["-p", "/mcp wait", "call ok again and again"],
    script,
    timeoutMs: 240_000,
  });
  let finished = false;
  const result = run.finally(() => {
    finished = true;
  });
  // The killer: each time the server now running has answered CALLS_PER_LIFE calls, it is killed (SIGKILL), from outside.
  const killed: number[] = [];
  const killer = (async () => {
    for (;;) {
      let pid: number | undefined;
      await until(
        () => {
          const started = lines(starts);
          pid = Number(started.at(-1));
          const answeredInAll = lines(calls);
          const answered = answeredInAll.filter((line) => Number(line) === pid).length;
          // Pi has made at most (answered + one failure per earlier kill + the call this kill may interrupt)
          // calls: kill only while a call is still to come after those, so that every kill must be followed
          // by a restart (a kill of Pi's last call leaves nothing to restart for, and the test could not tell
          // that from a missed restart).
          const callsToCome = answeredInAll.length + killed.length + 1 < CALLS;
          return finished || (started.length > 0 && !killed.includes(pid) && answered >= CALLS_PER_LIFE && callsToCome);
        },
        240_000,
        () => "the server answered no more calls",
      );
      if (finished) return;
      process.kill(pid!, "SIGKILL");
      killed.push(pid!);
    }
  })();
  const { code, requests } = await result;
  await killer;
  expect(code).toBe(0);
  expect(killed.length).toBeGreaterThanOrEqual(Math.floor(CALLS / CALLS_PER_LIFE) - 2);
  // Every process started after a kill, and the last one served the last calls.
  expect(lines(starts).length).toBe(killed.length + 1);
  const results = requests.at(-1)!.messages.filter((message: { role: string }) => message.role === "toolResult");
  expect(results).toHaveLength(CALLS);
  const texts: string[] = results.map((message: { content: { type: string; text?: string }[] }) =>
    message.content.map((block) => block.text ?? "").join(""),
  );
  const failed = texts.filter((text) => text !== "ok");

  expect(texts.join("\n")).not.toContain("not offered");
  // A kill can interrupt the call in flight (at most one per kill); every other call ran.
  expect(failed.length).toBeLessThanOrEqual(killed.length);
  for (const text of failed)
    expect(text).toMatch(
      /^e\/ok failed: the server's connection was lost during the call \(the connection closed unexpectedly: the server process was stopped by signal SIGKILL\); it is reconnecting \(retry \d+ of 12 in \d+ s\)$/,
    );
  expect(texts.filter((text) => text === "ok").length).toBeLessThanOrEqual(lines(calls).length);
}, 300_000);
