import { expect, it } from "vitest";
import { commandsFor } from "../../src/commands/index.ts";
import { RUNTIME_COMMANDS } from "../../src/commands/runtime.ts";
import { completeArguments } from "../../src/pi/completion.ts";

const commands = commandsFor("pi", RUNTIME_COMMANDS);
const values = (prefix: string, servers: string[] = []) => completeArguments(prefix, commands, servers)?.map((item) => item.value) ?? null;

it("completes /mcp subcommands from what was typed", () => {
  expect(values("re")).toEqual(["remove ", "reconnect "]);
  expect(values("")).toContain("status ");
  expect(values("zzz")).toBeNull();
});

it("completes server names for commands that take one, keeping the whole argument line", () => {
  expect(values("enable ", ["docs", "db"])).toEqual(["enable docs", "enable db"]);
  expect(values("remove -l d", ["docs", "db", "web"])).toEqual(["remove -l docs", "remove -l db"]);
  expect(values("reconnect w", ["docs", "web"])).toEqual(["reconnect web"]);
});

it("offers no server names where none belong", () => {
  expect(values("list ", ["docs"])).toBeNull();
  expect(values("enable docs ", ["docs"])).toBeNull();
});
