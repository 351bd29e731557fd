#!/usr/bin/env node
import { printOutcome, processIo } from "./io.ts";
import { runCli } from "./main.ts";

// The only place that decides the process's exit code.
const io = processIo();
const outcome = await runCli(process.argv.slice(2), io);
printOutcome(outcome, io);
process.exitCode = outcome.result.exitCode;
