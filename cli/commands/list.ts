import { listCommand } from "../../src/commands/list.ts";
import { specCommand } from "../spec-command.ts";

/** `pi-mcp list`: the shared `list` command (src/commands/list.ts), parsed by citty. */
export default specCommand(listCommand);
