// An MCP stdio transport that keeps what a supervisor needs and the SDK's own one drops: the
// exit code or signal, the last lines of stderr (always drained, so a chatty server never
// blocks on a full pipe), the lines on stdout that are not JSON-RPC, and a process group to
// kill, so a wedged server and whatever it started go away with it. Each line is checked
// against the protocol's message schema by the SDK's own deserializer.
import { type ChildProcess, spawn } from "node:child_process";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { LineTail } from "./line-tail.js";

export interface StdioServerParams {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
}

export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the program could not be started at all (e.g. ENOENT). */
  spawnError?: Error;
}

/** How long a server gets to exit by itself after its stdin closes, then after SIGTERM. */
const GRACE_MS = 500;
/** A message line longer than this (10 MB, the SDK's own limit) means the stream is broken. */
const MAX_LINE_BYTES = 10 * 1024 * 1024;
/** After the process exits, how long its pipes may stay open (held by its children). */
const PIPE_LINGER_MS = 300;

/** The SDK's line codec, which loads the protocol's schemas (zod): only once a server starts. */
let wire: typeof import("@modelcontextprotocol/sdk/shared/stdio.js") | undefined;

// Servers still running when Hands exits without closing them are stopped with it.
const live = new Set<ChildProcess>();
let exitHookInstalled = false;
function trackForExit(child: ChildProcess): void {
  live.add(child);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const c of live) killGroup(c, "SIGTERM");
  });
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {}
  }
}

export class ChildStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly stderr = new LineTail();
  /** Lines on stdout that were not JSON-RPC (a stray console.log): how many, and the last few. */
  readonly stdoutNoise = new LineTail(3, 200);
  stdoutNoiseLines = 0;
  /** Set once the process has ended (or failed to start). */
  exit: ProcessExit | undefined;

  private child: ChildProcess | undefined;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private closed = false;
  private readonly ended: Promise<void>;
  private markEnded!: () => void;

  constructor(private readonly params: StdioServerParams) {
    this.ended = new Promise((resolve) => {
      this.markEnded = resolve;
    });
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  async start(): Promise<void> {
    if (this.child) throw new Error("ChildStdioTransport already started");
    wire ??= await import("@modelcontextprotocol/sdk/shared/stdio.js");
    return new Promise((resolve, reject) => {
      // Its own process group: a terminal's Ctrl-C is Hands' to handle, and killing the
      // group also stops what the server started (npx → node, sh -c …).
      const child = spawn(this.params.command, this.params.args, {
        env: this.params.env,
        ...(this.params.cwd ? { cwd: this.params.cwd } : {}),
        stdio: ["pipe", "pipe", "pipe"],
        detached: true,
      });
      this.child = child;
      child.once("spawn", () => {
        trackForExit(child);
        resolve();
      });
      child.once("error", (err) => {
        // Only a failed spawn ends up here before 'spawn'; later errors are reported.
        if (!this.exit && child.pid === undefined) {
          this.exit = { code: null, signal: null, spawnError: err };
          this.finish();
          reject(err);
        } else this.onerror?.(err);
      });
      child.once("exit", (code, signal) => {
        this.exit = { code, signal };
        live.delete(child);
        // The pipes may be held open by the server's own children: give the last output a
        // moment to arrive, then stop the group so 'close' follows.
        setTimeout(() => killGroup(child, "SIGKILL"), PIPE_LINGER_MS).unref();
      });
      child.once("close", () => this.finish());
      child.stdin?.on("error", (err) => this.onerror?.(err));
      child.stdout?.on("data", (chunk: Buffer) => this.receive(chunk));
      child.stderr?.on("data", (chunk: Buffer) => this.stderr.push(chunk));
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || this.exit || stdin.destroyed) throw new Error("the server process is not running");
    if (!stdin.write(wire!.serializeMessage(message))) {
      await new Promise<void>((resolve) => {
        const done = () => {
          stdin.off("drain", done);
          stdin.off("close", done);
          resolve();
        };
        stdin.on("drain", done);
        stdin.on("close", done);
      });
    }
  }

  /** Asks the server to stop (stdin closed, then SIGTERM, then SIGKILL) and waits until it has. */
  async close(): Promise<void> {
    const child = this.child;
    this.closed = true;
    if (!child || this.exit?.spawnError) return this.finish();
    if (!this.exit) {
      child.stdin?.end();
      if (!(await this.endsWithin(GRACE_MS))) {
        killGroup(child, "SIGTERM");
        if (!(await this.endsWithin(GRACE_MS))) killGroup(child, "SIGKILL");
      }
    }
    await this.ended;
  }

  /** Stops the server at once (it is wedged); onclose follows as for any exit. */
  kill(): void {
    if (this.child && !this.exit) killGroup(this.child, "SIGKILL");
  }

  /** True when Hands asked the transport to close (so an exit is not a crash). */
  get closing(): boolean {
    return this.closed;
  }

  private receive(chunk: Buffer): void {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      this.pending.push(chunk.subarray(start, nl));
      const line = Buffer.concat(this.pending).toString("utf8").replace(/\r$/, "");
      this.pending = [];
      this.pendingBytes = 0;
      start = nl + 1;
      this.deliver(line);
    }
    if (start < chunk.length) {
      this.pending.push(chunk.subarray(start));
      this.pendingBytes += chunk.length - start;
      if (this.pendingBytes > MAX_LINE_BYTES) {
        this.pending = [];
        this.pendingBytes = 0;
        this.stderr.note("[hands: a line over 10 MB on stdout; the server was stopped]");
        this.kill();
      }
    }
  }

  private deliver(line: string): void {
    if (!line.trim()) return;
    let message: JSONRPCMessage;
    try {
      message = wire!.deserializeMessage(line);
    } catch {
      // Not JSON-RPC (a stray log line on stdout): kept for the report, then ignored.
      this.stdoutNoiseLines++;
      this.stdoutNoise.note(line);
      return;
    }
    this.onmessage?.(message);
  }

  private endsWithin(ms: number): Promise<boolean> {
    return Promise.race([
      this.ended.then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref()),
    ]);
  }

  private finishedOnce = false;
  private finish(): void {
    if (this.finishedOnce) return;
    this.finishedOnce = true;
    this.pending = [];
    this.markEnded();
    this.onclose?.();
  }
}
