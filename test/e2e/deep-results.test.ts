// A real Pi: a tool result whose structured content is nested 2,500 levels
// deep. Pi structured-clones the transcript for every model request, and that
// clone overflows at about 1,600 levels: uncut, the request after the call and
// every later one failed ("Maximum call stack size exceeded"). Cut at 1,000
// levels, the model gets the result with a note and the turn goes on.
import { expect, it } from "vitest";
import { fixturePath } from "../helpers/servers.ts";
import { callThenRepeat, NODE, PI_VERSIONS, runPiWithMcp, usePiHome } from "./harness/pi.ts";

const home = usePiHome();

for (const version of PI_VERSIONS) {
  it(`Pi ${version}: after a tool result nested 2,500 levels deep the next model request is made, and the model is told the content was cut`, async () => {
    await home.writeSettings({ mcp: { servers: { deep: { command: NODE, args: [fixturePath("deep-results")] } } } });
    const run = await runPiWithMcp(home, "go", callThenRepeat("mcp__deep__deep", { depth: 2_500 }), { version, timeoutMs: 60_000 });
    expect(run.timedOut, run.stderr).toBe(false);
    expect(run.stderr).not.toContain("Maximum call stack size exceeded");
    expect(run.code, run.stderr).toBe(0);
    expect(run.requests).toHaveLength(2); // the request after the tool call was made
    expect(run.stdout).toContain("model saw: see structured content");
    expect(run.stdout).toContain("[structured content nested more than 1000 levels deep");
  }, 90_000);
}
