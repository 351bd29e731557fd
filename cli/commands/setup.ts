import { setupCommand } from "../../src/commands/setup.ts";
import { specCommand } from "../spec-command.ts";

/** `pi-mcp setup`: the shared `setup` command (src/commands/setup.ts), parsed by citty. */
export default specCommand(setupCommand);
