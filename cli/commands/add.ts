import { addCommand } from "../../src/commands/manage.ts";
import { specCommand } from "../spec-command.ts";

/** `pi-mcp add`: the shared `add` command (src/commands/manage.ts), parsed by citty. */
export default specCommand(addCommand);
