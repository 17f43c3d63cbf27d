// Drives a program in a real pseudo-terminal through tmux (send-keys to type, capture-pane to
// read the screen), for the interactive-mode tests. Each instance has its own tmux server.
import { execFileSync } from "node:child_process";

export function hasTmux(): boolean {
  try {
    execFileSync("tmux", ["-V"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export class TmuxSession {
  private readonly socket = `hands-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  private started = false;

  constructor(
    private readonly width = 160,
    private readonly height = 50,
  ) {}

  private tmux(...args: string[]): string {
    return execFileSync("tmux", ["-L", this.socket, "-f", "/dev/null", ...args], { encoding: "utf8" });
  }

  /** Pastes `text` as a terminal does: bracketed (the program is told where a paste starts and ends). */
  paste(text: string): void {
    execFileSync("tmux", ["-L", this.socket, "-f", "/dev/null", "load-buffer", "-b", "p", "-"], {
      input: text,
    });
    this.tmux("paste-buffer", "-p", "-d", "-b", "p", "-t", "t");
  }

  /** The visible rows with their colours and styles (escape sequences), top to bottom. */
  rowsAnsi(): string[] {
    return this.tmux("capture-pane", "-p", "-e", "-t", "t").replace(/\n$/, "").split("\n");
  }

  /** Everything the program writes to the terminal from now on is copied into `file`. */
  recordOutput(file: string): void {
    this.tmux("pipe-pane", "-o", "-t", "t", `cat >> ${quote(file)}`);
  }

  resize(width: number, height = this.height): void {
    this.tmux("resize-window", "-t", "t", "-x", String(width), "-y", String(height));
  }

  /** Starts `argv` in `cwd` with exactly `env`; the pane stays after it exits, showing its code. */
  start(argv: string[], cwd: string, env: Record<string, string>): void {
    const assignments = Object.entries(env).map(([k, v]) => quote(`${k}=${v}`));
    const cmd = `cd ${quote(cwd)} && env -i ${assignments.join(" ")} ${argv.map(quote).join(" ")}; echo "[exited $?]"; sleep 600`;
    this.tmux("new-session", "-d", "-s", "t", "-x", String(this.width), "-y", String(this.height), cmd);
    this.started = true;
  }

  /** Types text literally, then Enter unless `enter` is false. */
  type(text: string, enter = true): void {
    if (text) this.tmux("send-keys", "-t", "t", "-l", text);
    if (enter) this.tmux("send-keys", "-t", "t", "Enter");
  }

  keys(...names: string[]): void {
    this.tmux("send-keys", "-t", "t", ...names);
  }

  /** The whole screen plus scrollback, as text. */
  screen(): string {
    return this.tmux("capture-pane", "-p", "-J", "-S", "-2000", "-t", "t");
  }

  /** The visible rows only, top to bottom (exactly `height` of them). */
  rows(): string[] {
    return this.tmux("capture-pane", "-p", "-t", "t").replace(/\n$/, "").split("\n");
  }

  /** The pid of the program (the shell's child). */
  programPid(): number {
    const shell = this.tmux("display-message", "-p", "-t", "t", "#{pane_pid}").trim();
    const child = execFileSync("pgrep", ["-P", shell], { encoding: "utf8" }).trim().split("\n")[0];
    return Number(child);
  }

  /** Waits until the screen matches (after `from` characters of it, to skip older output). */
  async waitFor(re: RegExp, timeoutMs = 15_000, from = 0): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    let last = "";
    while (Date.now() < deadline) {
      last = this.screen();
      if (re.test(last.slice(from))) return last;
      await new Promise((r) => setTimeout(r, 80));
    }
    throw new Error(`timed out waiting for ${re} on the screen:\n${last}`);
  }

  kill(): void {
    if (!this.started) return;
    try {
      this.tmux("kill-server");
    } catch {
      // already gone
    }
    this.started = false;
  }
}
