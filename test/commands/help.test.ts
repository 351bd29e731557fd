/**
 * One help for both surfaces, drawn from the command specs: every command of
 * `/mcp` and of the CLI has examples that use only what that surface takes,
 * and its help fits 80 columns with no trailing spaces.
 */
import { describe, expect, it } from "vitest";
import { commandsFor, helpCommand } from "../../src/commands/index.ts";
import { commandHelp, examplesFor } from "../../src/commands/help.ts";
import { surfaceOptions } from "../../src/commands/parse.ts";
import type { Surface } from "../../src/kernel/commands.ts";
import { createKernel, runtimeCommands } from "../../src/composition.ts";

const SURFACES: Surface[] = ["cli", "pi"];
/** An 80-column terminal: Pi pads its notices by one column on each side, so `/mcp` output has 78. */
const WIDTH: Record<Surface, number> = { cli: 80, pi: 78 };

function commandsOf(surface: Surface) {
  const all = commandsFor(surface, [...runtimeCommands(), ...createKernel().commands]);
  return surface === "pi" ? [...all, helpCommand(() => all)] : all;
}

describe.each(SURFACES)("on the %s surface", (surface) => {
  it("every command has one to three examples that name it and use only options the surface takes", () => {
    for (const command of commandsOf(surface)) {
      const examples = examplesFor(command, surface);
      expect(examples.length, command.name).toBeGreaterThanOrEqual(1);
      expect(examples.length, command.name).toBeLessThanOrEqual(3);
      const taken = new Set(
        surfaceOptions(command, surface).flatMap(([name, option]) => [`--${name}`, ...(option.short ? [`-${option.short}`] : [])]),
      );
      for (const example of examples) {
        expect(example.line.split(" ")[0], example.line).toBe(command.name);
        const [head] = example.line.split(" -- ");
        for (const flag of head!.match(/(?<=\s)-{1,2}[a-z][a-z-]*/g) ?? [])
          expect(taken, `${command.name}: ${example.line}`).toContain(flag);
      }
    }
  });

  it("no command shows the same example line twice", () => {
    for (const command of commandsOf(surface)) {
      const lines = examplesFor(command, surface).map((example) => example.line);
      expect(new Set(lines).size, `${command.name}: ${lines.join(" / ")}`).toBe(lines.length);
    }
  });

  it("every command's help fits an 80-column terminal (78 inside Pi's notices), has no trailing spaces and no colour unless asked", () => {
    for (const command of commandsOf(surface)) {
      const text = commandHelp(command, surface);
      expect(text).not.toMatch(/\u001b\[/);
      for (const line of text.split("\n")) {
        expect(line.length, `${command.name}: ${line}`).toBeLessThanOrEqual(WIDTH[surface]);
        expect(line, command.name).not.toMatch(/\s$/);
      }
      expect(commandHelp(command, surface, { color: true, width: 80 })).toContain("\u001b[1mUsage:\u001b[22m");
    }
  });
});

it("the CLI surface shows its own options (--json, --approve) and /mcp does not", () => {
  const [list] = commandsOf("cli").filter((command) => command.name === "list");
  expect(commandHelp(list!, "cli")).toMatch(/--json\s+Print one JSON document/);
  expect(commandHelp(list!, "cli")).toMatch(/-a, --approve/);
  expect(commandHelp(list!, "pi")).not.toMatch(/--json|--approve/);
});

it("/mcp help (every command) fits Pi's notices in an 80-column terminal: 78 columns, no trailing spaces", async () => {
  const all = commandsOf("pi");
  const help = all.find((command) => command.name === "help")!;
  const { output } = await help.run({ positionals: [], options: {}, rest: undefined }, undefined as never);
  expect(output).toContain("/mcp import [--from pi|claude|cursor|vscode|FILE]");
  // A usage line too long for one line continues further in than the summary under it.
  expect(output).toMatch(/^ {2}\/mcp add .*\n {10}\[--/m);
  expect(output).toMatch(/^ {6}Add or replace a server/m);
  for (const line of output.split("\n")) {
    expect(line.length, line).toBeLessThanOrEqual(WIDTH.pi);
    expect(line, line).not.toMatch(/\s$/);
  }
});

it("an example command line too long for one line continues further in than its description; in the CLI with a shell continuation", () => {
  const auth = commandsOf("cli").find((command) => command.name === "auth")!;
  const text = commandHelp(auth, "cli");
  expect(text).toContain(
    "  pi-mcp auth docs --callback \\\n          'http://127.0.0.1:19876/mcp/oauth/callback?code=…&state=…'\n      Finish a flow started with --no-open",
  );
  const inPi = commandHelp(commandsOf("pi").find((command) => command.name === "auth")!, "pi");
  expect(inPi).toContain(
    "  /mcp auth docs --callback\n          'http://127.0.0.1:19876/mcp/oauth/callback?code=…&state=…'\n      Finish a flow started with --no-open",
  );
});
