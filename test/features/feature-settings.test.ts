/*
 * `mcp.features` in a real Pi (1.6, print mode, the faux model): a feature
 * switched off in the settings is left out of the session's host, so a server
 * sees a client without it. server-everything offers trigger-sampling-request
 * only to a client that declares sampling; with `features.sampling: false` the
 * model is never offered it, and everything else still works.
 */
import { join } from "node:path";
import { expect, it } from "vitest";
import { NODE, REPO_ROOT, runPiWithMcp, usePiHome } from "../e2e/harness/pi.ts";

const EVERYTHING = join(REPO_ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const SAMPLING_TOOL = "mcp__everything__trigger-sampling-request";

const home = usePiHome();

async function toolsOffered(features: Record<string, boolean> | undefined): Promise<string[]> {
  await home.writeSettings({
    mcp: { ...(features && { features }), servers: { everything: { command: NODE, args: [EVERYTHING, "stdio"] } } },
  });
  const run = await runPiWithMcp(home, "echo please", [
    { toolCall: { name: "mcp__everything__echo", arguments: { message: "still here" } } },
    { textFromLastToolResult: true, prefix: "model saw: " },
  ]);
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout).toContain("model saw: Echo: still here");
  return run.requests[0]?.toolNames ?? [];
}

it("features.sampling: false leaves sampling out of the session: the server offers no sampling tool, its other tools work", async () => {
  expect(await toolsOffered(undefined)).toContain(SAMPLING_TOOL);
  const off = await toolsOffered({ sampling: false });
  expect(off).toContain("mcp__everything__echo");
  expect(off).not.toContain(SAMPLING_TOOL);
}, 180_000);
