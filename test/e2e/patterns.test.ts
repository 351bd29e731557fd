// Pi validates a tool's arguments against the schema pi-mcp registers, with
// V8's backtracking RegExp: a server's pattern `^(a+)+$` against 34 "a" then
// "!" would block Pi for hours. What pi-mcp registers carries no pattern, and
// pi-mcp's own check (linear time) refuses the arguments at once.
import { expect, it } from "vitest";
import { fixturePath } from "../helpers/servers.ts";
import { callThenRepeat, NODE, PI_VERSIONS, runPiWithMcp, usePiHome } from "./harness/pi.ts";

const home = usePiHome();

for (const version of PI_VERSIONS) {
  it(`Pi ${version}: arguments that make a server's input pattern backtrack exponentially are refused by pi-mcp's check, naming the pattern, and the turn goes on (Pi's own check runs no pattern)`, async () => {
    await home.writeSettings({ mcp: { servers: { r: { command: NODE, args: [fixturePath("redos")] } } } });
    const run = await runPiWithMcp(home, "go", callThenRepeat("mcp__r__echo", { text: `${"a".repeat(34)}!` }), {
      version,
      timeoutMs: 60_000,
    });
    expect(run.timedOut, run.stderr).toBe(false);
    expect(run.code, run.stderr).toBe(0);
    const results = run.requests.flatMap((request) => request.messages.filter((message: any) => message.role === "toolResult"));
    const texts = results.map((result: any) => result.content.map((part: any) => part.text ?? "").join(""));
    expect(texts).toEqual(['r/echo: arguments does not match its schema: arguments/text must match pattern "^(a+)+$"']);
    expect(run.stdout).toContain("model saw: r/echo: arguments does not match its schema");
  }, 90_000);
}
