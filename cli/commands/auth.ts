import { authCommand } from "../../plugins/auth-oauth/commands.ts";
import { specCommand } from "../spec-command.ts";

/** `pi-mcp auth`: the shared `auth` command (plugins/auth-oauth/commands.ts), parsed by citty. */
export default specCommand(authCommand);
