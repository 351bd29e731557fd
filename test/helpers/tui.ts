/**
 * A real Pi TUI in tmux, on a tmux server of its own whose socket lives (and
 * goes) with the temporary home: start it, read the screen, type into it,
 * stop it. A terminal announces nothing, so every wait reads the screen again
 * until what it waits for is there (with a generous bound).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { killProcessTree, NODE, processTree, piCli, REPO_ROOT, type PiHome, type PiVersion } from "../e2e/harness/pi.ts";
import { eventually, isAlive, until } from "./wait.ts";

/** The TUI tests need tmux (.ci/run installs Debian's when the machine lacks it): without it they fail, saying so, never skip. */
const HAS_TMUX = spawnSync("tmux", ["-V"]).status === 0;

export interface PiTuiOptions {
  readonly home: Pick<PiHome, "home" | "agentDir" | "cwd">;
  /** Pi's arguments (`-e …`, `--provider …`); stderr goes to `<home>/stderr.log`. */
  readonly args: readonly string[];
  /** Added to the environment (HOME, the agent folder, offline flags and PATH are set). */
  readonly env?: Readonly<Record<string, string>>;
  readonly version?: PiVersion;
  readonly columns?: number;
  readonly rows?: number;
}

export interface PiTui {
  /** A tmux command on this Pi's tmux server. */
  tmux(...args: string[]): string;
  /** The visible screen. */
  screen(): string;
  /** Everything Pi printed, scrollback included. */
  history(): string;
  /** The screen (or history) once `check` holds for it. */
  waitFor(what: string, check: (text: string) => boolean, options?: { timeoutMs?: number; read?: () => string }): Promise<string>;
  /** Types a line and submits it (see `submit` below). */
  submit(text: string): Promise<void>;
  /** Sends tmux key names (`C-o`, `Enter`). */
  keys(...keys: string[]): void;
  stop(): Promise<void>;
}

const SESSION = "pi";
const quote = (value: string) => `'${value.replace(/'/g, "'\\''")}'`;

/** The editor and what shows under it (a completion menu): from Pi's second-last separator to the line after the last. */
export function editorArea(shown: string): string {
  const lines = shown.split("\n");
  const separators = lines.flatMap((line, index) => (line.startsWith("───") ? [index] : []));
  return lines.slice(separators.at(-2) ?? 0, (separators.at(-1) ?? lines.length) + 2).join("\n");
}

/** Whether the editor (the line above Pi's last separator) holds `text`. */
function editorHolds(shown: string, text: string): boolean {
  const lines = shown.split("\n");
  return lines.some((line, index) => line.trim() === text && lines[index + 1]?.startsWith("───"));
}

export async function startPiTui(options: PiTuiOptions): Promise<PiTui> {
  if (!HAS_TMUX) throw new Error("tmux is not installed (apt-get install -y tmux; .ci/run installs it): the Pi TUI tests need it");
  const { home } = options;
  const tmux = (...args: string[]): string => execFileSync("tmux", ["-S", join(home.home, "tmux.sock"), ...args], { encoding: "utf8" });
  const screen = () => tmux("capture-pane", "-p", "-t", SESSION);
  const history = () => tmux("capture-pane", "-p", "-S", "-", "-t", SESSION);
  const waitFor: PiTui["waitFor"] = async (what, check, { timeoutMs = 30_000, read = screen } = {}) => {
    let text = "";
    return eventually(
      async () => {
        text = read();
        return check(text) ? text : undefined;
      },
      timeoutMs,
      () => `waiting for ${what}; screen:\n${text}`,
    );
  };
  /** The editor's state: its area and the cursor (accepting a completion such as `status ` moves it). */
  const editorState = () => `${tmux("display-message", "-p", "-t", SESSION, "#{cursor_x},#{cursor_y}").trim()}\n${editorArea(screen())}`;
  /**
   * An Enter that arrives while a (late, asynchronous) completion menu is open
   * only accepts the completion (the line stays, the cursor moves past the
   * added space): once Pi has taken the Enter (the editor's state changed) and
   * the line is still there, one more Enter submits it.
   */
  const submit = async (text: string) => {
    tmux("send-keys", "-t", SESSION, "-l", text);
    await waitFor(`"${text}" in the editor`, (shown) => editorHolds(shown, text));
    const typed = editorState();
    tmux("send-keys", "-t", SESSION, "Enter");
    await waitFor("Pi to take the Enter", () => editorState() !== typed);
    if (editorHolds(screen(), text)) tmux("send-keys", "-t", SESSION, "Enter");
    await waitFor(`"${text}" to be submitted`, (shown) => !editorHolds(shown, text));
  };

  const env: Record<string, string> = {
    HOME: home.home,
    PI_CODING_AGENT_DIR: home.agentDir,
    PI_OFFLINE: "1",
    PI_SKIP_VERSION_CHECK: "1",
    PI_TELEMETRY: "0",
    LANG: "C.UTF-8",
    PATH: `${join(REPO_ROOT, "node_modules/.bin")}:/usr/bin:/bin`,
    ...options.env,
  };
  const pidFile = join(home.home, "pi.pid");
  const launcher = join(home.home, "pi.sh");
  writeFileSync(
    launcher,
    [
      "#!/bin/sh",
      ...Object.entries(env).map(([key, value]) => `export ${key}=${quote(value)}`),
      `cd ${quote(home.cwd)}`,
      `echo $$ > ${quote(pidFile)}`,
      `exec ${[NODE, piCli(options.version ?? "1.6"), ...options.args].map(quote).join(" ")} 2>${quote(join(home.home, "stderr.log"))}`,
    ].join("\n"),
  );
  chmodSync(launcher, 0o755);
  tmux("new-session", "-d", "-x", String(options.columns ?? 80), "-y", String(options.rows ?? 50), "-s", SESSION, launcher);
  tmux("set-option", "-t", SESSION, "history-limit", "10000");
  let pid = 0;
  await waitFor("Pi to start", () => {
    try {
      pid = Number(readFileSync(pidFile, "utf8"));
      return pid > 0;
    } catch {
      return false;
    }
  });
  return {
    tmux,
    screen,
    history,
    waitFor,
    submit,
    keys: (...keys) => void tmux("send-keys", "-t", SESSION, ...keys),
    async stop() {
      const tree = pid ? processTree(pid) : [];
      try {
        tmux("kill-server");
      } catch {
        // already gone
      }
      if (pid) killProcessTree(pid);
      // Pi may still be finishing its files when the kill lands: the test's cleanup must
      // remove a home nobody writes into any more (ENOTEMPTY otherwise).
      await until(
        () => !tree.some(isAlive),
        30_000,
        () => `Pi's processes ${tree.filter(isAlive).join(", ")} still run`,
      );
    },
  };
}
