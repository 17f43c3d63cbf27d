// Host side of the persistent session shell (see session-script.ts): sends one command at a
// time, splits the output streams at the per-command end markers, enforces timeouts and
// aborts by asking the shell to kill the command's process group, and caps what it keeps.
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import type { Readable, Writable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import { DEFAULT_MAX_OUTPUT_BYTES, OutputBuffer } from "./output-buffer.js";
import { commandLine } from "./session-script.js";
import { DEFAULT_TIMEOUT_MS } from "./timeouts.js";
import type { ExecOptions, ExecResult } from "./types.js";

/** How long after asking the shell to kill a command we wait before giving the session up. */
const INTERRUPT_GRACE_MS = 3000;

export interface ShellTransport {
  stdin: Writable;
  stdout: Readable;
  stderr: Readable;
  /** Sends SIGUSR1 to the session shell (whose PID inside the sandbox is given). */
  interrupt(shellPid: number): Promise<void>;
  /**
   * Whether the session shell is stopped (SIGSTOP from a process inside the sandbox: a
   * command may signal its own shell), when the host can see it; undefined when it cannot.
   */
  stopped?(): boolean | undefined;
  /** Ends the session shell at once (SIGKILL), when the host can reach it. */
  kill?(): void;
}

/** How often a running command checks that its session shell was not stopped. */
const STOP_POLL_MS = 200;

/**
 * One command's part of one stream: what lies between its `TOKEN:begin` line and its
 * `TOKEN:end …` line. Everything outside (what a leftover process writes after its command
 * ended) is dropped.
 */
class Frame {
  private pending = Buffer.alloc(0);
  private phase: "begin" | "body" | "done" = "begin";
  private readonly begin: Buffer;
  private readonly end: Buffer;

  constructor(
    token: string,
    private readonly onData: (b: Buffer) => void,
    private readonly onEnd: (line: string) => void,
  ) {
    this.begin = Buffer.from(`${token}:begin\n`);
    this.end = Buffer.from(`${token}:end`);
  }

  push(chunk: Buffer): void {
    if (this.phase === "done") return;
    let buf = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = Buffer.alloc(0);
    if (this.phase === "begin") {
      const i = buf.indexOf(this.begin);
      if (i < 0) {
        this.hold(buf, this.begin.length - 1);
        return;
      }
      buf = buf.subarray(i + this.begin.length);
      this.phase = "body";
    }
    const e = buf.indexOf(this.end);
    if (e < 0) {
      // Only a tail that could begin the end marker waits for the next chunk: the rest streams
      // now (a short line no longer waits for the command's end).
      const keep = this.partialEnd(buf);
      if (buf.length > keep) this.onData(buf.subarray(0, buf.length - keep));
      this.hold(buf, keep);
      return;
    }
    if (e > 0) this.onData(buf.subarray(0, e));
    const rest = buf.subarray(e + this.end.length);
    const nl = rest.indexOf(10);
    if (nl < 0) {
      this.pending = Buffer.from(buf.subarray(e));
      return;
    }
    this.phase = "done";
    this.onEnd(rest.subarray(0, nl).toString("utf8"));
  }

  /** The length of the longest tail of `buf` that is a start of the end marker. */
  private partialEnd(buf: Buffer): number {
    for (let k = Math.min(this.end.length - 1, buf.length); k > 0; k--) {
      if (buf[buf.length - k] === this.end[0] && buf.subarray(buf.length - k).equals(this.end.subarray(0, k)))
        return k;
    }
    return 0;
  }

  private hold(buf: Buffer, keep: number): void {
    this.pending = Buffer.from(buf.subarray(Math.max(0, buf.length - keep)));
  }
}

/** A process a command left running: its PID inside the sandbox and its name. */
export interface BackgroundProcess {
  pid: number;
  name: string;
}

/** Parses the end line's list (`12:sleep 14:python3 +3`). */
export function parseLeftovers(text: string): { processes: BackgroundProcess[]; more: number } {
  const processes: BackgroundProcess[] = [];
  let more = 0;
  for (const w of text.trim().split(/\s+/)) {
    const m = /^(\d+):(.*)$/.exec(w);
    if (m) processes.push({ pid: Number(m[1]), name: m[2] ?? "" });
    else if (/^\+\d+$/.test(w)) more = Number(w.slice(1));
  }
  return { processes, more };
}

export class ShellSession {
  /** The running command's frames (none between commands: such output is dropped). */
  private out: Frame | undefined;
  private err: Frame | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private shellPid = 0;
  private closed = false;
  private closeWaiters: Array<() => void> = [];
  /** Why the session ended, when the host ended it (said in the next command's result). */
  private endReason: string | undefined;
  readonly ready: Promise<number>;

  constructor(private readonly transport: ShellTransport) {
    this.ready = new Promise<number>((resolve, reject) => {
      let seen = "";
      const onReady = (chunk: Buffer) => {
        seen += chunk.toString("utf8");
        const m = /READY (\d+)\n/.exec(seen);
        if (m) {
          transport.stdout.off("data", onReady);
          this.shellPid = Number(m[1]);
          transport.stdout.on("data", (c: Buffer) => this.out?.push(c));
          resolve(this.shellPid);
        } else if (seen.length > 65536) {
          reject(new Error(`sandbox shell did not start: ${seen.slice(0, 500)}`));
        }
      };
      transport.stdout.on("data", onReady);
      transport.stderr.on("data", (c: Buffer) => this.err?.push(c));
      const onClose = () => {
        this.markClosed();
        reject(new Error("sandbox shell exited before it was ready"));
      };
      transport.stdout.once("close", onClose);
      transport.stdout.once("end", onClose);
      transport.stdin.on("error", () => this.markClosed());
    });
    this.ready.catch(() => {});
  }

  /** False once the shell ended, or was found stopped (then it is killed: see stopCheck). */
  get alive(): boolean {
    if (!this.closed) this.stopCheck();
    return !this.closed;
  }

  /** Why the session ended, if the host ended it (a stopped shell); undefined otherwise. */
  get ended(): string | undefined {
    return this.endReason;
  }

  /**
   * A stopped shell would leave every later command waiting for its timeout: it is ended
   * instead (killed; the backend starts a fresh session and says so). Resuming it is no
   * answer: whatever stopped it may be running still, and stop it again.
   */
  private stopCheck(): boolean {
    if (this.closed || this.transport.stopped?.() !== true) return false;
    this.endReason = "its shell was stopped (SIGSTOP) by a process inside the sandbox";
    try {
      this.transport.kill?.();
    } catch {
      // gone already
    }
    this.markClosed();
    return true;
  }

  get pid(): number {
    return this.shellPid;
  }

  private markClosed(): void {
    if (this.closed) return;
    this.closed = true;
    for (const w of this.closeWaiters.splice(0)) w();
  }

  /** Runs commands one after another (a session has one shell). */
  exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    const run = this.queue.then(() => this.run(command, options));
    this.queue = run.catch(() => {});
    return run;
  }

  private async run(command: string, options: ExecOptions): Promise<ExecResult> {
    await this.ready;
    const start = performance.now();
    const maxBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
    const out = new OutputBuffer(maxBytes);
    const err = new OutputBuffer(maxBytes);
    if (options.signal?.aborted || this.closed) {
      return {
        stdout: "",
        stderr: this.closed ? "the sandbox session has ended" : "",
        exitCode: null,
        signal: null,
        timedOut: false,
        aborted: !this.closed,
        truncated: false,
        durationMs: 0,
      };
    }
    const token = `__HANDS_${randomBytes(12).toString("hex")}__`;
    let left: { processes: BackgroundProcess[]; more: number } = { processes: [], more: 0 };
    const outDecoder = new StringDecoder("utf8");
    const errDecoder = new StringDecoder("utf8");
    let timedOut = false;
    let aborted = false;
    let lost = false;
    let exitCode: number | null = null;
    let outDone = false;
    let errDone = false;
    const timers: NodeJS.Timeout[] = [];
    let stopped = false;

    await new Promise<void>((resolve) => {
      let finished = false;
      const finish = () => {
        if (finished) return;
        finished = true;
        for (const t of timers) clearTimeout(t);
        options.signal?.removeEventListener("abort", onAbort);
        this.closeWaiters = this.closeWaiters.filter((w) => w !== onClose);
        resolve();
      };
      const check = () => {
        if (outDone && errDone) finish();
      };
      const onClose = () => {
        lost = true;
        finish();
      };
      this.closeWaiters.push(onClose);
      const interrupt = () => {
        this.transport.interrupt(this.shellPid).catch(() => {});
        timers.push(
          setTimeout(() => {
            // The shell itself does not answer: give the session up.
            lost = true;
            finish();
          }, INTERRUPT_GRACE_MS),
        );
      };
      const onAbort = () => {
        if (aborted || timedOut) return;
        aborted = true;
        interrupt();
      };
      this.out = new Frame(
        token,
        (b) => {
          out.push(b);
          if (options.onStdout) {
            const s = outDecoder.write(b);
            if (s) options.onStdout(s);
          }
        },
        (line) => {
          const m = /^ (\d+) ?(.*)$/.exec(line);
          exitCode = m ? Number(m[1]) : null;
          left = parseLeftovers(m?.[2] ?? "");
          outDone = true;
          check();
        },
      );
      this.err = new Frame(
        token,
        (b) => {
          err.push(b);
          if (options.onStderr) {
            const s = errDecoder.write(b);
            if (s) options.onStderr(s);
          }
        },
        () => {
          errDone = true;
          check();
        },
      );
      const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
      if (Number.isFinite(timeoutMs) && timeoutMs > 0) {
        timers.push(
          setTimeout(() => {
            if (aborted) return;
            timedOut = true;
            interrupt();
          }, timeoutMs),
        );
      }
      options.signal?.addEventListener("abort", onAbort, { once: true });
      if (this.transport.stopped) {
        const poll = setInterval(() => {
          if (this.stopCheck()) stopped = true;
        }, STOP_POLL_MS);
        timers.push(poll);
      }
      if (this.stopCheck()) stopped = true;
      if (this.closed) return onClose();
      this.transport.stdin.write(
        commandLine({
          token,
          command,
          stdin: options.stdin,
          cwd: options.cwd,
          env: options.env,
          keepBackground: options.keepBackground,
        }),
      );
    });
    this.out = undefined;
    this.err = undefined;

    const tailOut = outDecoder.end();
    const tailErr = errDecoder.end();
    if (tailOut) options.onStdout?.(tailOut);
    if (tailErr) options.onStderr?.(tailErr);
    let stderr = err.toString();
    if (lost) {
      this.markClosed();
      stderr += stopped
        ? `${stderr ? "\n" : ""}[the sandbox session was ended: ${this.endReason}; its state is lost]`
        : `${stderr ? "\n" : ""}[the sandbox session ended; its state is lost]`;
    }
    if (left.processes.length > 0)
      stderr += `${stderr ? "\n" : ""}${backgroundNote(left, options.keepBackground)}`;
    // 128+n from the shell means the command died of signal n.
    let signal: string | null = null;
    if (exitCode !== null && exitCode > 128 && exitCode < 128 + 65) signal = signalName(exitCode - 128);
    return {
      stdout: out.toString(),
      stderr,
      exitCode: lost ? null : exitCode,
      signal,
      timedOut,
      aborted,
      truncated: out.truncated || err.truncated,
      durationMs: Math.round(performance.now() - start),
      stdoutBytes: out.totalBytes,
      stderrBytes: err.totalBytes,
      ...(left.processes.length > 0
        ? { background: left.processes, ...(left.more > 0 ? { backgroundMore: left.more } : {}) }
        : {}),
    };
  }
}

/**
 * What the first command in a fresh session is told when the previous session ended under it:
 * its working directory, exported variables and background processes are gone.
 */
export function endedNote(old: ShellSession): string {
  return `[the previous sandbox session had ended${old.ended ? ` (${old.ended})` : ""}; this command ran in a fresh one: the working directory, exported variables and background processes were reset]`;
}

/** The line a result carries about the processes its command left running. */
function backgroundNote(left: { processes: BackgroundProcess[]; more: number }, kept?: boolean): string {
  const list =
    left.processes.map((p) => `${p.pid} ${p.name}`).join(", ") + (left.more ? ` and ${left.more} more` : "");
  return kept
    ? `[left running in the background, kept as asked: ${list}]`
    : `[left running in the background: ${list} — killed before the next command (keepBackground keeps them)]`;
}

const SIGNALS: Record<number, string> = {
  1: "SIGHUP",
  2: "SIGINT",
  6: "SIGABRT",
  9: "SIGKILL",
  11: "SIGSEGV",
  13: "SIGPIPE",
  15: "SIGTERM",
};

/** The name of signal `n` (a shell's exit status 128+n). */
export function signalName(n: number): string {
  return SIGNALS[n] ?? `SIG${n}`;
}
