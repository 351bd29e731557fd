import { logoutCommand } from "../../plugins/auth-oauth/commands.ts";
import { specCommand } from "../spec-command.ts";

/** `pi-mcp logout`: the shared `logout` command (plugins/auth-oauth/commands.ts), parsed by citty. */
export default specCommand(logoutCommand);
