/**
 * The prompts plugin in-process (a kernel with it and the result mappers,
 * which map a prompt's content like a tool result's; fixture servers over the
 * SDK's in-memory transport pair):
 *
 * - `/mcp prompt <server> <prompt> [--arg NAME=VALUE]...` checks the
 *   arguments against the prompt's declared ones before anything is sent,
 *   gets the prompt (`prompts/get`), and adds its messages to the
 *   conversation as one `pi-mcp.prompt` message: provenance header, each
 *   message under its role, and a versioned record in its details. It never
 *   starts a turn (nothing is queued for one).
 * - A prompt that returns no messages adds nothing; a surface without a
 *   conversation cannot run it.
 */
import { afterEach, describe, expect, it } from "vitest";
import { PromptsPlugin } from "../../plugins/prompts/index.ts";
import { ResultMappingPlugin } from "../../plugins/result-mapping/index.ts";
import { MESSAGE_TYPES } from "../../src/kernel/pi-part.ts";
import type { SessionMessage } from "../../src/kernel/services.ts";
import { fakeServices } from "../helpers/services.ts";
import { type FixtureServer, pluginHost, stopAllHosts } from "./harness.ts";

afterEach(stopAllHosts);

/** A server with two prompts: `greet` {who (required), tone} and `empty` (no messages). */
const docs: FixtureServer = {
  era: "legacy",
  options: { capabilities: { prompts: {} } },
  build(server) {
    server.server.setRequestHandler("prompts/list", () => ({
      prompts: [
        {
          name: "greet",
          description: "Greets someone",
          arguments: [
            { name: "who", required: true },
            { name: "tone", description: "How" },
          ],
        },
        { name: "empty" },
      ],
    }));
    server.server.setRequestHandler("prompts/get", (request) => {
      const args = request.params.arguments ?? {};
      if (request.params.name === "empty") return { messages: [] };
      return {
        description: "A greeting",
        messages: [
          { role: "user", content: { type: "text", text: `Hello ${args.who}${args.tone ? `, ${args.tone}` : ""}` } },
          { role: "assistant", content: { type: "text", text: "Hello back." } },
        ],
      };
    });
  },
};

async function promptHost() {
  const services = fakeServices();
  const added: SessionMessage[] = [];
  const session = { ...services.session, addMessage: (message: SessionMessage) => void added.push(message) };
  const h = await pluginHost([new PromptsPlugin(), new ResultMappingPlugin()], { docs }, { services: { ...services, session } });
  await h.waitForState("docs", "connected");
  return { h, added, queued: services.session.messages };
}

describe("/mcp prompt", () => {
  it("gets the prompt with its arguments and adds its messages as one message for the next turn, starting none", async () => {
    const { h, added, queued } = await promptHost();
    const result = await h.command("prompt docs greet --arg who=Ada --arg tone=warmly");
    expect(result.exitCode).toBe(0);
    expect(result.output).toBe(
      'Added MCP prompt "greet" from "docs" (2 messages) to the conversation; the model sees it with your next message.',
    );
    const get = h.server("docs").received.find((message) => "method" in message && message.method === "prompts/get");
    expect(get).toMatchObject({ params: { name: "greet", arguments: { who: "Ada", tone: "warmly" } } });
    expect(added).toEqual([
      {
        customType: MESSAGE_TYPES.prompt,
        content: [
          {
            type: "text",
            text: [
              '[MCP prompt "greet" from server "docs" (who="Ada", tone="warmly"): 2 messages, run by the person with /mcp prompt]',
              "[user]",
              "Hello Ada, warmly",
              "[assistant]",
              "Hello back.",
            ].join("\n"),
          },
        ],
        details: {
          version: 1,
          server: "docs",
          prompt: "greet",
          arguments: { who: "Ada", tone: "warmly" },
          description: "A greeting",
          messages: [
            { role: "user", text: "Hello Ada, warmly", images: [] },
            { role: "assistant", text: "Hello back.", images: [] },
          ],
        },
      },
    ]);
    expect(queued).toEqual([]);
  });

  it("checks the arguments before anything is sent: a required one missing, an unknown one, a malformed pair", async () => {
    const { h, added } = await promptHost();
    const missing = await h.command("prompt docs greet --arg tone=warmly");
    expect(missing.exitCode).not.toBe(0);
    expect(missing.output).toContain('prompt "greet" needs --arg who=VALUE');
    const unknown = await h.command("prompt docs greet --arg who=Ada --arg mood=good");
    expect(unknown.output).toContain('prompt "greet" has no argument "mood" (arguments: who, tone)');
    const malformed = await h.command("prompt docs greet --arg who");
    expect(malformed.output).toContain('--arg takes NAME=VALUE, got "who"');
    expect(h.server("docs").methods()).not.toContain("prompts/get");
    expect(added).toEqual([]);
  });

  it("names the prompts a server offers when it has not the one asked for", async () => {
    const { h } = await promptHost();
    const result = await h.command("prompt docs nope");
    expect(result.exitCode).not.toBe(0);
    expect(result.output).toContain('server "docs" has no prompt "nope" (prompts: greet, empty)');
  });

  it("adds nothing for a prompt that returns no messages", async () => {
    const { h, added } = await promptHost();
    const result = await h.command("prompt docs empty");
    expect(result.exitCode).not.toBe(0);
    expect(result.output).toContain('prompt "empty" returned no messages; nothing was added');
    expect(added).toEqual([]);
  });

  it("needs a conversation to add the messages to", async () => {
    const h = await pluginHost([new PromptsPlugin()], { docs });
    await h.waitForState("docs", "connected");
    const result = await h.command("prompt docs greet --arg who=Ada");
    expect(result.exitCode).not.toBe(0);
    expect(result.output).toContain("this surface has no conversation to add the messages to");
    expect(h.server("docs").methods()).not.toContain("prompts/get");
  });
});
