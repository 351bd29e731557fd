import { testCommand } from "../../src/commands/runtime.ts";
import { specCommand } from "../spec-command.ts";

/** `pi-mcp test`: the shared `test` command (src/commands/runtime.ts), parsed by citty. */
export default specCommand(testCommand);
