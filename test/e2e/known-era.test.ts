// The era a connection found out is kept with its server's known catalog: in a real Pi, the
// next session with the same settings greets a 2025-era stdio server with initialize alone
// (no era probe), a bridge that takes one handshake per process included; the first session,
// with nothing known, connects both on its own.
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fixturePath, handshakesByProcess } from "../helpers/servers.ts";
import { NODE, REPO_ROOT, runPi, usePiHome } from "./harness/pi.ts";

const home = usePiHome();

/** `pi -p "/mcp wait" hi`, which records the catalogs when it ends. */
async function waitAndEnd(): Promise<void> {
  const run = await runPi({
    home: home.home,
    cwd: home.cwd,
    extensions: [REPO_ROOT],
    args: ["-p", "/mcp wait", "hi"],
    script: [{ text: "ok" }],
    timeoutMs: 60_000,
  });
  expect(run.code, run.stderr).toBe(0);
}

describe("a known catalog keeps its server's era", () => {
  it("the next session greets a 2025-era server, and a bridge that takes one handshake per process, with initialize alone", async () => {
    const bridgeEvents = join(home.home, "bridge.jsonl");
    const plainEvents = join(home.home, "plain.jsonl");
    const era2025 = (environment: Record<string, string>) => ({ command: NODE, args: [fixturePath("era-2025")], environment });
    await home.writeSettings({
      mcp: {
        servers: {
          bridge: era2025({ FIXTURE_PROBE: "spends", FIXTURE_EVENTS: bridgeEvents }),
          plain: era2025({ FIXTURE_EVENTS: plainEvents }),
        },
      },
    });

    await waitAndEnd();
    // Nothing known: the bridge spent its first process on the probe, the plain server took both on one.
    expect(await handshakesByProcess(bridgeEvents)).toEqual([["server/discover", "initialize"], ["initialize"]]);
    expect(await handshakesByProcess(plainEvents)).toEqual([["server/discover", "initialize"]]);
    const folder = join(home.agentDir, "pi-mcp/catalogs");
    const files = (await readdir(folder)).filter((name) => name !== "index.json" && name.endsWith(".json"));
    const stored = await Promise.all(files.map(async (name) => JSON.parse(await readFile(join(folder, name), "utf8"))));
    expect(stored.map((file) => [file.server, file.era?.kind]).sort()).toEqual([
      ["bridge", "legacy"],
      ["plain", "legacy"],
    ]);

    await waitAndEnd();
    expect((await handshakesByProcess(bridgeEvents)).slice(2)).toEqual([["initialize"]]);
    expect((await handshakesByProcess(plainEvents)).slice(1)).toEqual([["initialize"]]);
  });
});
