// A real Pi: a resource subscription made with /mcp subscribe brings a notice on the next turn.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { usePiHome, NODE, REPO_ROOT, startPiRpc } from "./harness/pi.ts";

const EVERYTHING = join(REPO_ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const URI = "demo://resource/static/document/architecture.md";

const home = usePiHome();

it("notes a changed subscribed resource for the next turn, naming server and URI, without reading it", async () => {
  await writeFile(
    join(home.agentDir, "settings.json"),
    JSON.stringify({ mcp: { servers: { everything: { command: NODE, args: [EVERYTHING, "stdio"] } } } }),
  );
  const rpc = await startPiRpc({
    home: home.home,
    cwd: home.cwd,
    extensions: [REPO_ROOT],
    noSession: false,
    script: [{ toolCall: { name: "mcp__everything__toggle-subscriber-updates", arguments: {} } }, { text: "updates on" }, { text: "seen" }],
  });
  try {
    await rpc.prompt("/mcp wait");
    const subscribed = await rpc.prompt(`/mcp subscribe everything ${URI}`);
    expect(JSON.stringify(subscribed.records)).toContain(`Subscribed to ${URI}`);
    // Turning updates on, server-everything sends one for each subscribed resource at once (before the
    // tool's answer, so it has reached the host when the turn ends), then more every 5 s.
    await rpc.prompt("turn updates on");
    await rpc.prompt("anything new?");
    const last = rpc.requests().at(-1)!;
    const seen = JSON.stringify(last.messages);
    expect(seen).toContain(`Server \\"everything\\" reports that resource ${URI} changed`);
    expect(seen).toContain("has not been read");
  } finally {
    await rpc.close();
  }
}, 60_000);
