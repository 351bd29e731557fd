import { getCommand } from "../../src/commands/get.ts";
import { specCommand } from "../spec-command.ts";

/** `pi-mcp get`: the shared `get` command (src/commands/get.ts), parsed by citty. */
export default specCommand(getCommand);
