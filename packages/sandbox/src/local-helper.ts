// The local backend's persistent helper process (local-helper-script.ts): started on the first
// command, driven through ShellSession like a sandbox's session shell, replaced when it ends or
// is found stopped.
import { type ChildProcess, spawn } from "node:child_process";
import { LOCAL_HELPER_SCRIPT } from "./local-helper-script.js";
import { killSession, processState } from "./proc.js";
import { SESSION_COMMAND, SESSION_ENV } from "./session-script.js";
import { ShellSession } from "./shell-session.js";
import type { ExecOptions, ExecResult } from "./types.js";

/** How long destroy waits for the helper to kill its jobs and leave before SIGKILL. */
const EXIT_GRACE_MS = 1000;

export class LocalHelper {
  private child: ChildProcess | undefined;
  private session: ShellSession | undefined;
  private running = 0;

  constructor(
    private readonly shell: string,
    private readonly workspace: string,
    private readonly env: () => Record<string, string>,
  ) {}

  /** Runs one command in a job of the helper (started, or started afresh, as needed). */
  async exec(command: string, options: ExecOptions): Promise<ExecResult> {
    const session = this.session?.alive ? this.session : await this.start();
    // The helper keeps this process alive only while a command runs: an idle one (a sandbox
    // nobody destroyed) must not hold the event loop open. It leaves when its stdin closes.
    this.running++;
    this.ref(true);
    try {
      return await session.exec(command, options);
    } finally {
      if (--this.running === 0) this.ref(false);
    }
  }

  private ref(on: boolean): void {
    const c = this.child;
    if (!c) return;
    for (const h of [c, c.stdin, c.stdout, c.stderr] as Array<{
      ref?: () => void;
      unref?: () => void;
    } | null>)
      on ? h?.ref?.() : h?.unref?.();
  }

  private async start(): Promise<ShellSession> {
    if (this.child?.pid) killSession(this.child.pid);
    const child = spawn(this.shell, [...SESSION_COMMAND, "bash"], {
      cwd: this.workspace,
      env: { ...this.env(), [SESSION_ENV]: LOCAL_HELPER_SCRIPT },
      detached: true, // own process group and session (no controlling terminal), as before
      stdio: ["pipe", "pipe", "pipe"],
      windowsHide: true,
    });
    child.stdin.on("error", () => {});
    child.on("error", () => {});
    this.child = child;
    const pid = child.pid;
    // Killed by a command (`kill -KILL $$`): its jobs would keep the pipes, and the call, open.
    child.once("exit", () => {
      if (pid) killSession(pid);
    });
    const session = new ShellSession({
      stdin: child.stdin,
      stdout: child.stdout,
      stderr: child.stderr,
      interrupt: async () => {
        if (pid) process.kill(pid, "SIGUSR1");
      },
      stopped: () => (pid ? processState(pid) === "T" : undefined),
      // The helper and every job it started (one session: the helper's PID).
      kill: () => {
        if (pid) killSession(pid);
      },
    });
    this.session = session;
    try {
      await session.ready;
    } catch (e) {
      child.kill("SIGKILL");
      throw e;
    }
    return session;
  }

  /** Ends the helper: it kills the groups of the running and the last job, then leaves. */
  async destroy(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), EXIT_GRACE_MS);
    await exited;
    clearTimeout(timer);
    if (child.pid) killSession(child.pid);
  }
}
