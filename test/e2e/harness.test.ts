/**
 * The e2e harness works on both Pi versions: a real `pi` process, offline, with the faux model.
 * Also pins down how extension command output surfaces in print and RPC mode.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FAUX_EXHAUSTED } from "./harness/faux-provider.ts";
import { makePiHome, PI_VERSIONS, REPO_ROOT, runPi, startPiRpc, type PiHome } from "./harness/pi.ts";

const PROBE = join(REPO_ROOT, "test/e2e/harness/fixtures/probe.ts");

/** Running (not gone, not a zombie awaiting its reaper). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

describe.each(PI_VERSIONS)("harness on Pi %s", (version) => {
  let h: PiHome;
  beforeEach(async () => {
    h = await makePiHome();
  });
  afterEach(async () => {
    await h.cleanup();
  });
  const base = () => ({ version, home: h.home, cwd: h.cwd, extensions: [PROBE] });

  it("print mode: a command alone needs no model turn; notify is dropped, console goes to stderr", async () => {
    const r = await runPi({ ...base(), args: ["-p", "/probe a b"] });
    expect(r.code).toBe(0);
    // Pi redirects process.stdout to stderr in print mode; only fd 1 (and the final reply) reach stdout.
    expect(r.stdout).toBe("PROBE-FD1 a b\n");
    expect(r.stderr).toContain("PROBE-CONSOLE a b");
    expect(r.stdout + r.stderr).not.toContain("PROBE-NOTIFY");
    expect(r.stderr).toContain("[probe] session_start reason=startup mode=print hasUI=false");
    expect(r.requests).toEqual([]);
  });

  it("the faux model calls a tool and replies with the result it received", async () => {
    const r = await runPi({
      ...base(),
      args: ["-p", "please echo"],
      script: [{ toolCall: { name: "probe_echo", arguments: { text: "hi" } } }, { textFromLastToolResult: true, prefix: "got: " }],
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("got: probe_echo says: hi\n");
    expect(r.requests).toHaveLength(2);
    const toolResult = r.requests[1]!.messages.at(-1);
    expect(toolResult).toMatchObject({ role: "toolResult", toolName: "probe_echo", isError: false });
  });

  it("the faux log records offered tools, system prompt and messages", async () => {
    const r = await runPi({ ...base(), args: ["-p", "hello"], script: [{ text: "first" }] });
    expect(r.stdout).toBe("first\n");
    const [req] = r.requests;
    expect(req!.toolNames).toEqual(expect.arrayContaining(["read", "bash", "probe_echo"]));
    expect(req!.tools.find((t) => t.name === "probe_echo")?.description).toBe("Echo the given text back, prefixed.");
    expect(req!.systemPrompt).toContain(h.cwd);
    expect(req!.messages).toMatchObject([{ role: "user", content: [{ type: "text", text: "hello" }] }]);
    const again = await runPi({ ...base(), args: ["-p", "hello"] });
    expect(again.stdout).toBe(`${FAUX_EXHAUSTED}\n`);
  });

  it("RPC: commands, prompts, reload and new_session; the script survives both", async () => {
    const rpc = await startPiRpc({ ...base(), script: [{ text: "one" }, { text: "two" }] });
    try {
      const cmd = await rpc.prompt("/probe x");
      expect(cmd.records).toContainEqual(
        expect.objectContaining({ type: "extension_ui_request", method: "notify", message: "PROBE-NOTIFY x" }),
      );
      const run = await rpc.prompt("hello");
      expect(run.records.map((r) => r.type)).toContain("agent_settled");
      expect((await rpc.send({ type: "get_last_assistant_text" })).data.text).toBe("one");
      await rpc.prompt("/probe_reload");
      expect((await rpc.send({ type: "new_session" })).data).toEqual({ cancelled: false });
      await rpc.prompt("again");
      expect((await rpc.send({ type: "get_last_assistant_text" })).data.text).toBe("two");
      expect(rpc.requests().map((q) => q.messages.length)).toEqual([1, 1]);
      expect(rpc.stderr()).toMatch(/reason=startup mode=rpc hasUI=true[\s\S]*reason=reload[\s\S]*reason=new/);
    } finally {
      expect(await rpc.close()).toEqual({ code: 0, signal: null });
    }
  });

  it("a run that outlives its timeout is killed with its whole process tree", async () => {
    // Timed from the moment the probe has started its grandchild, however long Pi took to get there.
    const r = await runPi({ ...base(), args: ["-p", "/probe_hang"], timeoutMs: 500, timeoutFrom: /grandchild pid=\d+/ });
    expect(r.timedOut).toBe(true);
    expect(r.signal).toBe("SIGKILL");
    const pid = Number(/grandchild pid=(\d+)/.exec(r.stderr)?.[1]);
    expect(pid).toBeGreaterThan(0);
    await expect.poll(() => alive(pid), { timeout: 30_000 }).toBe(false); // the detached `sleep` too
  });
});
