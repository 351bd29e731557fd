/**
 * The session-start Attention Notice about servers only Pi's built-in
 * mcp.json names: once per change of that file, only with a UI, never
 * connecting them — decided by `importNotice`, then shown by a real Pi 1.6
 * once across two runs with the same mcp.json.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.ts";
import { importNotice, noticeStatePath, type NoticeContext } from "../../src/import/notice.ts";
import { NODE, REPO_ROOT, makePiHome, startPiRpc, type PiHome } from "../e2e/harness/pi.ts";
import { useSandbox, type Sandbox } from "../helpers/tmp.ts";

describe("importNotice", () => {
  const sandbox = useSandbox();

  function context(box: Sandbox, options: { hasUI?: boolean; trusted?: boolean } = {}) {
    const shown: { message: string; type: string | undefined }[] = [];
    const ctx: NoticeContext = {
      hasUI: options.hasUI ?? true,
      cwd: box.projectDir,
      isProjectTrusted: () => options.trusted ?? false,
      ui: { notify: (message, type) => shown.push({ message, type }) },
    };
    return { ctx, shown };
  }

  const config = (box: Sandbox, trusted = false) =>
    loadConfig({ agentDir: box.agentDir, cwd: box.projectDir, projectTrusted: trusted, env: box.env() });

  it("names the servers pi-mcp does not know, once per content of mcp.json", async () => {
    const box = sandbox();
    await box.writeJson(join(box.agentDir, "mcp.json"), {
      mcpServers: { docs: { url: "https://x.example.com/mcp" }, known: { command: "k" }, files: { command: "f" } },
    });
    await box.writeJson(box.globalSettings, { mcp: { servers: { known: { command: "k" } } } });
    const { ctx, shown } = context(box);
    expect(await importNotice(ctx, box.agentDir, await config(box))).toBe(true);
    expect(shown).toEqual([
      {
        type: "warning",
        message: expect.stringMatching(
          /^Pi's built-in MCP configuration \(.*mcp\.json\) names 2 servers pi-mcp does not know: docs, files\. .*pi-mcp import --from pi/,
        ),
      },
    ]);
    expect(shown[0]!.message).toContain("has not connected them");
    expect(shown[0]!.message).toContain("Run pi-mcp setup (or /mcp setup; add --dry-run to preview)");
    // Same content: silent, also after a restart. Changed content: once more.
    expect(await importNotice(ctx, box.agentDir, await config(box))).toBe(false);
    expect(await importNotice(context(box).ctx, box.agentDir, await config(box))).toBe(false);
    await box.writeJson(join(box.agentDir, "mcp.json"), {
      mcpServers: { docs: { url: "https://x.example.com/mcp" }, added: { command: "a" } },
    });
    expect(await importNotice(ctx, box.agentDir, await config(box))).toBe(true);
    expect(shown.at(-1)!.message).toContain("2 servers pi-mcp does not know: added, docs.");
    expect(JSON.parse(await readFile(noticeStatePath(box.agentDir), "utf8"))).toMatchObject({
      version: 1,
      files: { [join(box.agentDir, "mcp.json")]: expect.stringMatching(/^[0-9a-f]{64}$/) },
    });
  });

  it("stays silent without a UI, when pi-mcp knows every server, and for a file Pi could not parse", async () => {
    const box = sandbox();
    await box.writeJson(join(box.agentDir, "mcp.json"), { mcpServers: { docs: { url: "https://x.example.com/mcp" } } });
    const headless = context(box, { hasUI: false });
    expect(await importNotice(headless.ctx, box.agentDir, await config(box))).toBe(false);
    expect(existsSync(noticeStatePath(box.agentDir))).toBe(false);
    await box.writeJson(box.globalSettings, { mcp: { servers: { docs: { enabled: false, command: "d" } } } });
    expect(await importNotice(context(box).ctx, box.agentDir, await config(box))).toBe(false);
    await box.writeText(join(box.agentDir, "mcp.json"), "{ not json");
    expect(await importNotice(context(box).ctx, box.agentDir, await config(box))).toBe(false);
  });

  it("reads the project's .pi/mcp.json only when Pi trusts the project", async () => {
    const box = sandbox();
    await box.writeJson(join(box.projectDir, ".pi", "mcp.json"), { mcpServers: { local: { command: "l" } } });
    expect(await importNotice(context(box).ctx, box.agentDir, await config(box))).toBe(false);
    const trusted = context(box, { trusted: true });
    expect(await importNotice(trusted.ctx, box.agentDir, await config(box, true))).toBe(true);
    expect(trusted.shown[0]!.message).toContain(": local.");
  });
});

describe("a real Pi 1.6 with a built-in mcp.json", () => {
  let home: PiHome;
  beforeEach(async () => {
    home = await makePiHome();
  });
  afterEach(async () => {
    await home.cleanup();
  });

  it("shows the notice once across two runs with the same mcp.json, and connects nothing", async () => {
    const marker = join(home.home, "started-by-someone");
    const starter = `require("node:fs").writeFileSync(${JSON.stringify(marker)}, "started")`;
    await writeJson(join(home.agentDir, "mcp.json"), { mcpServers: { "from-builtin": { command: NODE, args: ["-e", starter] } } });
    const notices: string[][] = [];
    for (let run = 0; run < 2; run++) {
      const rpc = await startPiRpc({ home: home.home, cwd: home.cwd, extensions: [REPO_ROOT] });
      try {
        // `/mcp wait` answers after the host started, so the notice has been decided by then.
        await rpc.prompt("/mcp wait", { settle: false, timeoutMs: 30_000 });
        notices.push(
          rpc.records
            .filter(
              (record) =>
                record.type === "extension_ui_request" && record.method === "notify" && String(record.message).includes("pi-mcp import"),
            )
            .map((record) => record.message),
        );
      } finally {
        await rpc.close();
      }
    }
    expect(notices[0]).toEqual([expect.stringContaining("names a server pi-mcp does not know: from-builtin. ")]);
    expect(notices[0]![0]).toContain("pi-mcp import --from pi");
    expect(notices[0]![0]).toContain("Run pi-mcp setup");
    expect(notices[1]).toEqual([]);
    expect(existsSync(marker)).toBe(false);
  });
});

async function writeJson(path: string, value: unknown): Promise<void> {
  const { mkdir, writeFile } = await import("node:fs/promises");
  await mkdir(join(path, ".."), { recursive: true });
  await writeFile(path, JSON.stringify(value, null, 2));
}
