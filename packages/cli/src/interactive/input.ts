// Line input for the session: readline with history in a terminal, plain lines in a pipe.
// Lines that arrive while nobody is waiting are queued (typing ahead, or a whole piped script).
import { appendFileSync, mkdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import { createInterface, type Interface } from "node:readline";

const HISTORY_LINES = 500;

export class LineInput {
  readonly rl: Interface;
  private readonly queue: string[] = [];
  private waiting: ((line: string | null) => void) | undefined;
  private closed = false;
  private isSuspended = false;

  constructor(
    readonly tty: boolean,
    private readonly historyPath?: string,
  ) {
    let history: string[] = [];
    if (tty && historyPath) {
      try {
        history = readFileSync(historyPath, "utf8")
          .split("\n")
          .filter(Boolean)
          .reverse()
          .slice(0, HISTORY_LINES);
      } catch {
        history = [];
      }
    }
    this.rl = createInterface({
      input: process.stdin,
      output: process.stdout,
      terminal: tty,
      history,
      historySize: HISTORY_LINES,
    });
    this.rl.on("line", (line) => {
      if (this.waiting) {
        const w = this.waiting;
        this.waiting = undefined;
        w(line);
      } else this.queue.push(line);
    });
    this.rl.on("close", () => {
      this.closed = true;
      const w = this.waiting;
      this.waiting = undefined;
      w?.(null);
    });
  }

  /** The next line, or null at end of input (Ctrl-D). */
  read(prompt: string): Promise<string | null> {
    const queued = this.queue.shift();
    if (queued !== undefined) {
      if (!this.tty) process.stdout.write(`${prompt}${queued}\n`);
      return Promise.resolve(queued);
    }
    if (this.closed) return Promise.resolve(null);
    if (this.tty) {
      this.rl.setPrompt(prompt);
      this.rl.prompt();
    } else process.stdout.write(prompt);
    return new Promise((resolve) => {
      this.waiting = (line) => {
        if (!this.tty && line !== null) process.stdout.write(`${line}\n`);
        resolve(line);
      };
    });
  }

  /** A request: lines ending in `\` continue on the next line. */
  async readRequest(prompt: string, more: string): Promise<string | null> {
    let line = await this.read(prompt);
    if (line === null) return null;
    const parts: string[] = [];
    while (line.endsWith("\\")) {
      parts.push(line.slice(0, -1));
      const next = await this.read(more);
      if (next === null) break;
      line = next;
    }
    if (!line.endsWith("\\")) parts.push(line);
    const text = parts.join("\n");
    if (text.trim() && this.historyPath) {
      try {
        mkdirSync(dirname(this.historyPath), { recursive: true, mode: 0o700 });
        appendFileSync(this.historyPath, `${text.replace(/\n/g, " ")}\n`, { mode: 0o600 });
      } catch {
        // History is a convenience; never fail a request over it.
      }
    }
    return text;
  }

  /** Gives a pending read an empty answer (Ctrl-C during a question). */
  cancelPending(): boolean {
    const w = this.waiting;
    if (!w) return false;
    this.waiting = undefined;
    w("");
    return true;
  }

  get isWaiting(): boolean {
    return this.waiting !== undefined;
  }

  /** True while another program (an editor) has the terminal. */
  get suspended(): boolean {
    return this.isSuspended;
  }

  /** Hands the terminal to another program: no reading, and the line discipline back on. */
  suspend(): void {
    this.isSuspended = true;
    this.rl.pause();
    if (this.tty && process.stdin.isTTY) process.stdin.setRawMode(false);
  }

  resume(): void {
    if (this.tty && process.stdin.isTTY) process.stdin.setRawMode(true);
    this.rl.resume();
    this.isSuspended = false;
  }

  close(): void {
    this.rl.close();
  }
}
