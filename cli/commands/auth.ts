import { authCommand } from "../../src/commands/auth.ts";
import { specCommand } from "../spec-command.ts";

/** `pi-mcp auth`: the shared `auth` command (src/commands/auth.ts), parsed by citty. */
export default specCommand(authCommand);
