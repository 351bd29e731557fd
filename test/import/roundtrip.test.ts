/**
 * The round trip: server-everything defined in each host's own format,
 * imported, then connected for real by `test` (temporary clients, the real
 * kernel) — and a variable from the environment reaches the server without
 * ever being printed.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliCommandEnvironment } from "../../src/commands/environment.ts";
import { runCommandLine } from "../../src/commands/index.ts";
import { importCommand } from "../../src/commands/import.ts";
import { testCommand, type TestedServer } from "../../src/commands/runtime.ts";
import type { ImportDocument } from "../../src/import/types.ts";
import { REPO_ROOT, nodeBinary, useSandbox, type Sandbox } from "../helpers/tmp.ts";
import { places, trustProject } from "./helpers.ts";

const sandbox = useSandbox();
const NODE = nodeBinary();
const SCRIPT = "node_modules/@modelcontextprotocol/server-everything/dist/index.js";
const SECRET = "roundtrip-secret-5e1f0a";

/** server-everything (stdio), written the way each host documents a local server. */
const SOURCES: Record<string, (box: Sandbox) => { path: string; text: string }> = {
  pi: (box) => ({
    path: places(box).piGlobal,
    text: JSON.stringify({
      mcpServers: {
        everything: { command: NODE, args: [SCRIPT, "stdio"], cwd: REPO_ROOT, env: { TOKEN: "$ROUNDTRIP_TOKEN" }, timeout: 30 },
      },
    }),
  }),
  claude: (box) => ({
    path: places(box).claude,
    text: JSON.stringify({
      mcpServers: {
        everything: { type: "stdio", command: NODE, args: [SCRIPT, "stdio"], cwd: REPO_ROOT, env: { TOKEN: "${ROUNDTRIP_TOKEN}" } },
      },
    }),
  }),
  cursor: (box) => ({
    path: places(box).cursorGlobal,
    text: `{\n  // a Cursor file\n  "mcpServers": { "everything": { "command": ${JSON.stringify(NODE)}, "args": [${JSON.stringify(join(REPO_ROOT, SCRIPT))}, "stdio"], "env": { "TOKEN": "\${env:ROUNDTRIP_TOKEN}" }, }, },\n}\n`,
  }),
  vscode: (box) => ({
    path: places(box).vscodeWorkspace,
    text: JSON.stringify({
      servers: {
        everything: { type: "stdio", command: NODE, args: [SCRIPT, "stdio"], cwd: REPO_ROOT, env: { TOKEN: "${env:ROUNDTRIP_TOKEN}" } },
      },
      inputs: [],
    }),
  }),
};

const createKernel = async () => (await import("../../src/composition.ts")).createKernel();

describe.each(Object.keys(SOURCES))("import --from %s, then test", (from) => {
  it("connects the imported server-everything definition for real", async () => {
    const box = sandbox();
    await trustProject(box);
    const source = SOURCES[from]!(box);
    await box.writeText(source.path, source.text);
    const env = box.env({ ROUNDTRIP_TOKEN: SECRET });
    const imported = await runCommandLine(
      [importCommand],
      ["import", "--from", from, "--json"],
      cliCommandEnvironment(box.projectDir, env, createKernel),
    );
    expect(imported.exitCode, imported.output).toBe(0);
    const document = imported.json as ImportDocument;
    expect(document.imported.map((server) => server.name)).toEqual(["everything"]);
    expect(JSON.stringify(document.imported[0]!.definition.environment)).toBe('{"TOKEN":"${ROUNDTRIP_TOKEN}"}');

    // A fresh environment reads the settings the import wrote.
    const tested = await runCommandLine(
      [testCommand],
      ["test", "everything", "--json"],
      cliCommandEnvironment(box.projectDir, env, createKernel),
    );
    const [server] = (tested.json as { servers: TestedServer[] }).servers;
    expect(server, tested.output).toMatchObject({ name: "everything", ok: true, error: null });
    expect(server!.tools).toBeGreaterThan(5);
    expect(server!.serverInfo?.name).toContain("everything");
    expect(imported.output + tested.output + JSON.stringify(tested.json)).not.toContain(SECRET);
  });
});
