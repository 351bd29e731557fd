import { importCommand } from "../../src/commands/import.ts";
import { specCommand } from "../spec-command.ts";

/** `pi-mcp import`: the shared `import` command (src/commands/import.ts), parsed by citty. */
export default specCommand(importCommand);
