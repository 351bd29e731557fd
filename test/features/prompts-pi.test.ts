/*
 * `/mcp prompt` in a real Pi 1.6 (RPC mode, sessions saved to files, the scripted faux model):
 * the prompt's messages reach the model with the next turn, exactly once; they are stored in
 * the session as versioned `pi-mcp.prompt` custom messages; they survive `/resume`
 * (switch_session) and follow `/fork` to the branch that holds them only.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { makePiHome, NODE, PI_VERSIONS, REPO_ROOT, runPi, startPiRpc, type FauxLogEntry, type PiHome } from "../e2e/harness/pi.ts";

const EVERYTHING = join(REPO_ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");

const SIMPLE = "This is a simple prompt without arguments.";
const ARGS = "What's weather in Paris, Texas?";
const COMPLETABLE = "Please promote Alice to the head of the Engineering team.";

let home: PiHome;
beforeEach(async () => {
  home = await makePiHome();
  await writeFile(
    join(home.agentDir, "settings.json"),
    JSON.stringify({ mcp: { servers: { everything: { command: NODE, args: [EVERYTHING, "stdio"] } } } }, null, 2),
  );
});
afterEach(async () => {
  await home.cleanup();
});

/** How often `text` occurs in everything one model request was given. */
function seen(request: FauxLogEntry | undefined, text: string): number {
  return JSON.stringify(request?.messages ?? []).split(JSON.stringify(text).slice(1, -1)).length - 1;
}

it.each(PI_VERSIONS)(
  "Pi %s: prompt messages reach the next turn once, survive /resume and follow /fork to the right branch only",
  { timeout: 90_000 },
  async (version) => {
    const script = ["one", "two", "three", "in fork", "resumed"].map((text) => ({ text }));
    const rpc = await startPiRpc({ version, home: home.home, cwd: home.cwd, extensions: [REPO_ROOT], noSession: false, script });
    try {
      const notices = (records: any[]) =>
        records.filter((r) => r.type === "extension_ui_request" && r.method === "notify").map((r) => r.message);

      // Run straight after start: the command waits for the server to connect. It starts no turn.
      const first = await rpc.prompt("/mcp prompt everything simple-prompt", { timeoutMs: 30_000 });
      expect(notices(first.records)).toEqual([expect.stringContaining('Added MCP prompt "simple-prompt" from "everything" (1 message)')]);
      expect(first.records.some((r) => r.type === "agent_start")).toBe(false);
      expect(rpc.requests()).toHaveLength(0);

      await rpc.prompt("first question");
      const bad = await rpc.prompt("/mcp prompt everything args-prompt --arg state=Texas");
      expect(notices(bad.records)).toEqual([expect.stringContaining('prompt "args-prompt" needs --arg city=VALUE')]);
      await rpc.prompt("/mcp prompt everything args-prompt --arg city=Paris --arg state=Texas");
      await rpc.prompt("second question");
      await rpc.prompt("/mcp prompt everything completable-prompt --arg department=Engineering --arg name=Alice");
      await rpc.prompt("third question");

      const [one, two, three] = rpc.requests();
      // The model sees each prompt's messages from the next turn on, exactly once, with its provenance.
      expect([seen(one, SIMPLE), seen(one, ARGS), seen(one, COMPLETABLE)]).toEqual([1, 0, 0]);
      expect([seen(two, SIMPLE), seen(two, ARGS), seen(two, COMPLETABLE)]).toEqual([1, 1, 0]);
      expect([seen(three, SIMPLE), seen(three, ARGS), seen(three, COMPLETABLE)]).toEqual([1, 1, 1]);
      expect(seen(one, '[MCP prompt "simple-prompt" from server "everything"')).toBe(1);
      // Pi gives custom messages to the model as user messages, in conversation order.
      expect(three!.messages.find((message) => JSON.stringify(message).includes(SIMPLE))?.role).toBe("user");
      const order = JSON.stringify(three!.messages);
      expect(order.indexOf(SIMPLE)).toBeLessThan(order.indexOf("first question"));
      expect(order.indexOf(ARGS)).toBeLessThan(order.indexOf("second question"));
      expect(order.indexOf(COMPLETABLE)).toBeLessThan(order.indexOf("third question"));

      // The session file holds them as versioned custom messages.
      const original = (await rpc.send({ type: "get_state" })).data.sessionFile as string;
      const entries = (await readFile(original, "utf8"))
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line));
      const stored = entries.filter((entry) => entry.type === "custom_message" && entry.customType === "pi-mcp.prompt");
      expect(stored.map((entry) => [entry.details.version, entry.details.server, entry.details.prompt, entry.details.arguments])).toEqual([
        [1, "everything", "simple-prompt", {}],
        [1, "everything", "args-prompt", { city: "Paris", state: "Texas" }],
        [1, "everything", "completable-prompt", { department: "Engineering", name: "Alice" }],
      ]);
      // No second copy of them to replay.
      expect(entries.filter((entry) => entry.type === "custom" && String(entry.customType).startsWith("pi-mcp.prompt"))).toEqual([]);

      // /fork at "second question": the new branch holds the first two prompts, not the third.
      const forkable = (await rpc.send({ type: "get_fork_messages" })).data.messages as { entryId: string; text: string }[];
      const at = forkable.find((message) => message.text === "second question")!;
      expect((await rpc.send({ type: "fork", entryId: at.entryId }, 30_000)).data.cancelled).toBe(false);
      const forked = (await rpc.send({ type: "get_state" })).data.sessionFile as string;
      expect(forked).not.toBe(original);
      await rpc.prompt("in the fork", { timeoutMs: 30_000 });
      const fork = rpc.requests()[3];
      expect([seen(fork, SIMPLE), seen(fork, ARGS), seen(fork, COMPLETABLE)]).toEqual([1, 1, 0]);
      expect(seen(fork, "second question")).toBe(0);

      // /resume the original session: all three, once each, and nothing from the fork.
      expect((await rpc.send({ type: "switch_session", sessionPath: original }, 30_000)).data.cancelled).toBe(false);
      await rpc.prompt("resumed question", { timeoutMs: 30_000 });
      const resumed = rpc.requests()[4];
      expect([seen(resumed, SIMPLE), seen(resumed, ARGS), seen(resumed, COMPLETABLE)]).toEqual([1, 1, 1]);
      expect(seen(resumed, "in the fork")).toBe(0);
      expect(rpc.requests()).toHaveLength(5);
    } finally {
      await rpc.close();
    }
  },
);

it('print mode: `pi -p "/mcp prompt …" "question"` gives the prompt\'s messages to that question\'s turn', {
  timeout: 60_000,
}, async () => {
  const run = await runPi({
    home: home.home,
    cwd: home.cwd,
    extensions: [REPO_ROOT],
    args: ["-p", "/mcp prompt everything args-prompt --arg city=Paris --arg state=Texas", "answer it"],
    script: [{ text: "sunny" }],
    timeoutMs: 60_000,
  });
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout).toContain('Added MCP prompt "args-prompt" from "everything" (1 message)');
  expect(run.stdout).toContain("sunny");
  expect(run.requests).toHaveLength(1);
  expect(seen(run.requests[0], ARGS)).toBe(1);
});
