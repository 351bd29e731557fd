import { enableCommand } from "../../src/commands/manage.ts";
import { specCommand } from "../spec-command.ts";

/** `pi-mcp enable`: the shared `enable` command (src/commands/manage.ts), parsed by citty. */
export default specCommand(enableCommand);
