#!/usr/bin/env node
import { runMain } from "citty";
import { terminalSafeJson } from "../src/safety/text.ts";
import { createCli, listCommandNames } from "./main.ts";

// citty treats `--help` anywhere as a help request; a local server's own
// arguments after `--` must not trigger it, so citty sees only what precedes.
const argv = process.argv.slice(2);
const dashes = argv.indexOf("--");
const head = dashes === -1 ? argv : argv.slice(0, dashes);

const HELP = new Set(["--help", "-h", "--version", "-v"]);
const commandName = head[0];
const knownCommand = (name: string | undefined) => name !== undefined && (HELP.has(name) || listCommandNames().includes(name));

const cli = createCli({
  argv,
  onResult(result, json) {
    if (json && result.json !== undefined) process.stdout.write(`${terminalSafeJson(result.json, 2)}\n`);
    else if (result.exitCode === 0) process.stdout.write(`${result.output}\n`);
    else process.stderr.write(`${result.output}\n`);
    process.exitCode = result.exitCode;
  },
});

if (knownCommand(commandName)) {
  await runMain(cli, { rawArgs: head });
} else {
  // A missing or unknown command is a usage error: exit 2, with the list of commands.
  process.stderr.write(`${commandName ? `unknown command "${commandName}"` : "no command given"}; commands: ${listCommandNames().join(", ")}\n`);
  process.stderr.write("Run pi-mcp --help for usage.\n");
  process.exitCode = 2;
}
