// The CLI and /mcp take plugin commands the same way: from the plugins' `commands`. The program
// knows every name without loading a plugin (its subcommands load when they run), and each name
// it offers is the very spec a plugin (or the core) declares for the CLI.
import { expect, it } from "vitest";
import { SUBCOMMANDS } from "../../cli/main.ts";
import { commandsFor } from "../../src/commands/index.ts";
import { createKernel, runtimeCommands, surfaceCommands } from "../../src/composition.ts";

it("the program offers every command the core and the plugins declare for the CLI, each loading the very spec /mcp runs", async () => {
  const declared = surfaceCommands("cli");
  expect(declared).toEqual(commandsFor("cli", [...runtimeCommands(), ...createKernel().commands]));
  expect(Object.keys(SUBCOMMANDS).sort()).toEqual(declared.map((command) => command.name).sort());
  for (const spec of declared) expect((await SUBCOMMANDS[spec.name as keyof typeof SUBCOMMANDS]()).spec, spec.name).toBe(spec);
});

it("auth and logout are the auth-oauth plugin's: a kernel without it offers neither to /mcp", () => {
  const names = (kernel: ReturnType<typeof createKernel>) => surfaceCommands("pi", kernel).map((command) => command.name);
  expect(names(createKernel())).toEqual(expect.arrayContaining(["auth", "logout"]));
  expect(names(createKernel({ disable: ["auth-oauth"] }))).not.toContain("auth");
  expect(names(createKernel({ disable: ["auth-oauth"] }))).not.toContain("logout");
  expect(createKernel().commands.filter((command) => command.name === "auth" || command.name === "logout")).toHaveLength(2);
});
