import { logoutCommand } from "../../src/commands/auth.ts";
import { specCommand } from "../spec-command.ts";

/** `pi-mcp logout`: the shared `logout` command (src/commands/auth.ts), parsed by citty. */
export default specCommand(logoutCommand);
