import { removeCommand } from "../../src/commands/manage.ts";
import { specCommand } from "../spec-command.ts";

/** `pi-mcp remove`: the shared `remove` command (src/commands/manage.ts), parsed by citty. */
export default specCommand(removeCommand);
