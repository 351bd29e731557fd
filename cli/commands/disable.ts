import { disableCommand } from "../../src/commands/manage.ts";
import { specCommand } from "../spec-command.ts";

/** `pi-mcp disable`: the shared `disable` command (src/commands/manage.ts), parsed by citty. */
export default specCommand(disableCommand);
