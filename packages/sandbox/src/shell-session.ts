// Host side of the persistent session shell (see session-script.ts): sends one command at a
// time, splits the output streams at the per-command end markers, enforces timeouts and
// aborts by asking the shell to kill the command's process group, and caps what it keeps.
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import type { Readable, Writable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import { DEFAULT_TIMEOUT_MS } from "./local.js";
import { DEFAULT_MAX_OUTPUT_BYTES, OutputBuffer } from "./output-buffer.js";
import { commandLine } from "./session-script.js";
import type { ExecOptions, ExecResult } from "./types.js";

/** How long after asking the shell to kill a command we wait before giving the session up. */
const INTERRUPT_GRACE_MS = 3000;

export interface ShellTransport {
  stdin: Writable;
  stdout: Readable;
  stderr: Readable;
  /** Sends SIGUSR1 to the session shell (whose PID inside the sandbox is given). */
  interrupt(shellPid: number): Promise<void>;
}

/** Scans one stream for a marker, passing on everything before it. */
class MarkerSplitter {
  private pending = Buffer.alloc(0);
  private marker: Buffer | undefined;
  private onData: ((b: Buffer) => void) | undefined;
  private onMarker: ((rest: Buffer) => boolean) | undefined;

  expect(marker: string, onData: (b: Buffer) => void, onMarker: (rest: Buffer) => boolean): void {
    this.marker = Buffer.from(marker);
    this.onData = onData;
    this.onMarker = onMarker;
    if (this.pending.length > 0) {
      const p = this.pending;
      this.pending = Buffer.alloc(0);
      this.push(p);
    }
  }

  push(chunk: Buffer): void {
    const marker = this.marker;
    if (!marker || !this.onData || !this.onMarker) {
      // Output between commands (a background job still writing): keep a little, drop the rest.
      this.pending = Buffer.concat([this.pending, chunk]).subarray(-65536);
      return;
    }
    const buf = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : chunk;
    const idx = buf.indexOf(marker);
    if (idx >= 0) {
      if (idx > 0) this.onData(buf.subarray(0, idx));
      const rest = buf.subarray(idx + marker.length);
      if (this.onMarker(rest)) {
        this.marker = undefined;
        this.onData = undefined;
        this.onMarker = undefined;
        const nl = rest.indexOf(10);
        this.pending = Buffer.from(rest.subarray(nl + 1));
      } else {
        this.pending = Buffer.from(buf.subarray(idx));
      }
      return;
    }
    const keep = Math.min(buf.length, marker.length - 1);
    if (buf.length > keep) this.onData(buf.subarray(0, buf.length - keep));
    this.pending = Buffer.from(buf.subarray(buf.length - keep));
  }
}

export class ShellSession {
  private readonly out = new MarkerSplitter();
  private readonly err = new MarkerSplitter();
  private queue: Promise<unknown> = Promise.resolve();
  private shellPid = 0;
  private closed = false;
  private closeWaiters: Array<() => void> = [];
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
          transport.stdout.on("data", (c: Buffer) => this.out.push(c));
          const rest = seen.slice((m.index ?? 0) + m[0].length);
          if (rest) this.out.push(Buffer.from(rest));
          resolve(this.shellPid);
        } else if (seen.length > 65536) {
          reject(new Error(`sandbox shell did not start: ${seen.slice(0, 500)}`));
        }
      };
      transport.stdout.on("data", onReady);
      transport.stderr.on("data", (c: Buffer) => this.err.push(c));
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

  get alive(): boolean {
    return !this.closed;
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
    const outDecoder = new StringDecoder("utf8");
    const errDecoder = new StringDecoder("utf8");
    let timedOut = false;
    let aborted = false;
    let lost = false;
    let exitCode: number | null = null;
    let outDone = false;
    let errDone = false;
    const timers: NodeJS.Timeout[] = [];

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
      this.out.expect(
        token,
        (b) => {
          out.push(b);
          if (options.onStdout) {
            const s = outDecoder.write(b);
            if (s) options.onStdout(s);
          }
        },
        (rest) => {
          const nl = rest.indexOf(10);
          if (nl < 0) return false;
          const code = Number(rest.subarray(0, nl).toString("utf8").trim());
          exitCode = Number.isFinite(code) ? code : null;
          outDone = true;
          check();
          return true;
        },
      );
      this.err.expect(
        token,
        (b) => {
          err.push(b);
          if (options.onStderr) {
            const s = errDecoder.write(b);
            if (s) options.onStderr(s);
          }
        },
        (rest) => {
          if (rest.indexOf(10) < 0) return false;
          errDone = true;
          check();
          return true;
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
      if (this.closed) return onClose();
      this.transport.stdin.write(
        commandLine({ token, command, stdin: options.stdin, cwd: options.cwd, env: options.env }),
      );
    });

    const tailOut = outDecoder.end();
    const tailErr = errDecoder.end();
    if (tailOut) options.onStdout?.(tailOut);
    if (tailErr) options.onStderr?.(tailErr);
    let stderr = err.toString();
    if (lost) {
      this.markClosed();
      stderr += `${stderr ? "\n" : ""}[the sandbox session ended; its state is lost]`;
    }
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
    };
  }
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

function signalName(n: number): string {
  return SIGNALS[n] ?? `SIG${n}`;
}
