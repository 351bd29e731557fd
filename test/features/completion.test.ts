// `/mcp prompt` argument completion through OUR host: servers, prompt names, argument names, and values via completion/complete.
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commandsFor } from "../../src/commands/index.ts";
import type { CommandSpec } from "../../src/kernel/commands.ts";
import { createKernel, runtimeCommands } from "../../src/composition.ts";
import { completeArgumentsLive, type CompletionItem } from "../../src/pi/completion.ts";
import { everythingStdio, startHost, type TestHost } from "../helpers/host.ts";
import { nodePath } from "../helpers/servers.ts";

const PROMPT_SERVER = fileURLToPath(new URL("./fixtures/prompt-server.mjs", import.meta.url));
const promptServer = { command: nodePath(), args: [PROMPT_SERVER] };
const modernServer = { command: nodePath(), args: [fileURLToPath(new URL("./fixtures/prompt-server-2026.mjs", import.meta.url))] };

/** What Pi's `/mcp` would offer: the core, runtime and feature commands. */
const commands: CommandSpec[] = commandsFor("pi", [...runtimeCommands(), ...createKernel().commands]);

async function complete(h: TestHost | undefined, prefix: string): Promise<string[] | null> {
  const host = h ? () => Promise.resolve(h.host) : () => undefined;
  const items = await completeArgumentsLive(prefix, commands, ["everything", "prompts", "modern"], host);
  return items?.map((item: CompletionItem) => item.value) ?? null;
}

describe("completion with server-everything and the prompt fixture", () => {
  let h: TestHost;
  beforeAll(async () => {
    // A short request timeout: a server that never answers a completion must not hold completion up.
    h = await startHost({ everything: everythingStdio(), prompts: promptServer }, { requestTimeoutMs: 1_500 });
    await h.waitForState("everything", "connected", 20_000);
    await h.waitForState("prompts", "connected");
  }, 30_000);
  afterAll(() => h?.stop());

  it("offers the prompt command and configured servers without asking any server", async () => {
    expect(await complete(undefined, "pro")).toEqual(["prompt "]);
    expect(await complete(undefined, "prompt ")).toEqual(["prompt everything", "prompt prompts", "prompt modern"]);
    expect(await complete(undefined, "prompt ev")).toEqual(["prompt everything"]);
    // Before the session started there is no host to ask.
    expect(await complete(undefined, "prompt everything ")).toBeNull();
  });

  it("offers the server's prompt names", async () => {
    const names = await complete(h, "prompt everything ");
    expect(names).toEqual(
      expect.arrayContaining(["prompt everything simple-prompt", "prompt everything args-prompt", "prompt everything completable-prompt"]),
    );
    expect(await complete(h, "prompt everything comp")).toEqual(["prompt everything completable-prompt"]);
    expect(await complete(h, "prompt prompts g")).toEqual(["prompt prompts greet"]);
    const items = await completeArgumentsLive("prompt prompts g", commands, [], () => Promise.resolve(h.host));
    expect(items).toEqual([{ value: "prompt prompts greet", label: "greet", description: "Greeting" }]);
    expect(await complete(h, "prompt nowhere ")).toBeNull();
  });

  it("offers the prompt's argument names, required ones first, leaving out those already given", async () => {
    expect(await complete(h, "prompt everything args-prompt ")).toEqual([
      "prompt everything args-prompt --arg city=",
      "prompt everything args-prompt --arg state=",
    ]);
    expect(await complete(h, "prompt everything args-prompt --a")).toEqual([
      "prompt everything args-prompt --arg city=",
      "prompt everything args-prompt --arg state=",
    ]);
    expect(await complete(h, "prompt everything args-prompt --arg ")).toEqual([
      "prompt everything args-prompt --arg city=",
      "prompt everything args-prompt --arg state=",
    ]);
    expect(await complete(h, "prompt everything args-prompt --arg c")).toEqual(["prompt everything args-prompt --arg city="]);
    expect(await complete(h, "prompt everything args-prompt --arg city=Paris ")).toEqual([
      "prompt everything args-prompt --arg city=Paris --arg state=",
    ]);
    expect(await complete(h, "prompt everything simple-prompt ")).toBeNull();
    const items = await completeArgumentsLive("prompt prompts greet --arg ", commands, [], () => Promise.resolve(h.host));
    expect(items).toEqual([
      { value: "prompt prompts greet --arg who=", label: "who=", description: "required: Whom to greet" },
      { value: "prompt prompts greet --arg tone=", label: "tone=", description: "optional: How" },
    ]);
  });

  it("completes the completable prompt's argument values through completion/complete, narrowed by earlier arguments", async () => {
    expect(await complete(h, "prompt everything completable-prompt --arg department=")).toEqual([
      "prompt everything completable-prompt --arg department=Engineering",
      "prompt everything completable-prompt --arg department=Sales",
      "prompt everything completable-prompt --arg department=Marketing",
      "prompt everything completable-prompt --arg department=Support",
    ]);
    expect(await complete(h, "prompt everything completable-prompt --arg department=S")).toEqual([
      "prompt everything completable-prompt --arg department=Sales",
      "prompt everything completable-prompt --arg department=Support",
    ]);
    // The server narrows `name` by the department already given.
    expect(await complete(h, "prompt everything completable-prompt --arg department=Engineering --arg name=")).toEqual([
      "prompt everything completable-prompt --arg department=Engineering --arg name=Alice",
      "prompt everything completable-prompt --arg department=Engineering --arg name=Bob",
      "prompt everything completable-prompt --arg department=Engineering --arg name=Charlie",
    ]);
    expect(await complete(h, "prompt everything completable-prompt --arg=department=Sa")).toEqual([
      "prompt everything completable-prompt --arg=department=Sales",
    ]);
    expect(await complete(h, "prompt everything completable-prompt --arg nosuch=")).toBeNull();
  });

  it("quotes values the command line would split, and passes the context the server narrows by", async () => {
    expect(await complete(h, "prompt prompts greet --arg who=A")).toEqual([
      "prompt prompts greet --arg who=Ada",
      "prompt prompts greet --arg who=Alan",
    ]);
    expect(await complete(h, "prompt prompts greet --arg tone=formal --arg who=")).toEqual([
      'prompt prompts greet --arg tone=formal --arg who="Dr. Ada Lovelace"',
      'prompt prompts greet --arg tone=formal --arg who="Sir Alan Turing"',
    ]);
  });

  it("completes over the 2026-07-28 protocol too", async () => {
    const modern = await startHost({ modern: modernServer });
    try {
      await modern.waitForState("modern", "connected");
      expect(modern.status("modern").protocolVersion).toBe("2026-07-28");
      expect(await complete(modern, "prompt modern ")).toEqual(["prompt modern team"]);
      expect(await complete(modern, "prompt modern team --arg department=")).toEqual([
        "prompt modern team --arg department=Engineering",
        "prompt modern team --arg department=Sales",
      ]);
      expect(await complete(modern, "prompt modern team --arg department=Engineering --arg lead=")).toEqual([
        "prompt modern team --arg department=Engineering --arg lead=Alice",
        "prompt modern team --arg department=Engineering --arg lead=Bob",
      ]);
    } finally {
      await modern.stop();
    }
  });

  it("gives no suggestions, within the request timeout, when the server never answers", async () => {
    const started = Date.now();
    expect(await complete(h, "prompt prompts greet --arg tone=")).toBeNull();
    expect(Date.now() - started).toBeLessThan(4_000);
  });

  it("asks no server whose kernel lacks the completion plugin", async () => {
    const off = await startHost({ everything: everythingStdio() }, { kernel: createKernel({ disable: ["completion"] }) });
    try {
      await off.waitForState("everything", "connected", 20_000);
      const connection = off.host.server("everything")!;
      const request = {
        client: connection.requireClient(),
        requestTimeoutMs: 1_000,
        prompt: "completable-prompt",
        argument: "department",
        value: "",
      };
      expect(await off.host.kernelInstance.hooks.complete.promise(request)).toBeUndefined();
      expect(
        await h.host.kernelInstance.hooks.complete.promise({ ...request, client: h.host.server("everything")!.requireClient() }),
      ).toContain("Engineering");
      // Prompt and argument names still come from the prompts plugin.
      expect(await complete(off, "prompt everything completable-prompt --arg d")).toEqual([
        "prompt everything completable-prompt --arg department=",
      ]);
      expect(await complete(off, "prompt everything completable-prompt --arg department=")).toBeNull();
      expect(createKernel({ disable: ["completion"] }).hooks.complete.taps).toHaveLength(0);
    } finally {
      await off.stop();
    }
  });
});
