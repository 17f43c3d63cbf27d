// The session manager: creates sessions up to a maximum (later requests wait in a queue),
// destroys sessions idle longer than the TTL or older than the hard maximum age, reaps what
// crashed runs left behind, and writes every event to the audit log.
import { AuditLog } from "./audit.js";
import { createSandbox } from "./create.js";
import { reapLeftovers } from "./reaper.js";
import type { ExecOptions, ExecResult, Sandbox, SandboxOptions } from "./types.js";

export interface SessionManagerOptions {
  /** Idle time after which a session is destroyed (default 5 minutes). */
  idleTtlMs?: number;
  /** Age after which a session is destroyed even if busy (default 1 hour). */
  maxAgeMs?: number;
  /** Sessions alive at once (default 8); more wait in a queue. */
  maxSessions?: number;
  /** JSONL audit log path (none: no log). */
  auditPath?: string;
  /** How often the reaper runs (default 30 s). */
  reapIntervalMs?: number;
}

interface Entry {
  sandbox: Sandbox;
  createdAt: number;
  lastUsedAt: number;
  busy: number;
}

export class SessionManager {
  readonly idleTtlMs: number;
  readonly maxAgeMs: number;
  readonly maxSessions: number;
  readonly audit: AuditLog;
  private readonly sessions = new Map<string, Entry>();
  private readonly waiting: Array<() => void> = [];
  private pending = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(options: SessionManagerOptions = {}) {
    this.idleTtlMs = options.idleTtlMs ?? 5 * 60_000;
    this.maxAgeMs = options.maxAgeMs ?? 60 * 60_000;
    this.maxSessions = options.maxSessions ?? 8;
    this.audit = new AuditLog(options.auditPath);
    const every = options.reapIntervalMs ?? 30_000;
    this.timer = setInterval(() => void this.reap(), every);
    this.timer.unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  list(): Array<{ id: string; kind: string; workspace: string; createdAt: number; lastUsedAt: number }> {
    return [...this.sessions.values()].map((e) => ({
      id: e.sandbox.id,
      kind: e.sandbox.kind,
      workspace: e.sandbox.workspace,
      createdAt: e.createdAt,
      lastUsedAt: e.lastUsedAt,
    }));
  }

  /** Creates a session, waiting for a free slot when the maximum is reached. */
  async create(options: SandboxOptions): Promise<Sandbox> {
    while (this.sessions.size + this.pending >= this.maxSessions)
      await new Promise<void>((r) => this.waiting.push(r));
    this.pending++;
    let sandbox: Sandbox;
    try {
      sandbox = await createSandbox(options);
    } catch (e) {
      this.pending--;
      this.wakeOne();
      throw e;
    }
    this.pending--;
    const now = Date.now();
    this.sessions.set(sandbox.id, { sandbox, createdAt: now, lastUsedAt: now, busy: 0 });
    this.audit.write({
      event: "create",
      session: sandbox.id,
      kind: sandbox.kind,
      workspace: sandbox.workspace,
    });
    return this.wrap(sandbox);
  }

  get(id: string): Sandbox | undefined {
    const e = this.sessions.get(id);
    return e ? this.wrap(e.sandbox) : undefined;
  }

  /** A view of the sandbox that records its use (TTL) and audits each call. */
  private wrap(sandbox: Sandbox): Sandbox {
    const entry = this.sessions.get(sandbox.id) as Entry;
    const audit = this.audit;
    const touch = () => {
      entry.lastUsedAt = Date.now();
    };
    const file = async <T>(
      op: "read" | "write",
      path: string,
      f: () => Promise<T>,
      bytes?: number,
    ): Promise<T> => {
      touch();
      try {
        const r = await f();
        audit.write({
          event: "file",
          session: sandbox.id,
          op,
          path,
          bytes: bytes ?? (Buffer.isBuffer(r) ? r.length : 0),
        });
        return r;
      } catch (e) {
        audit.write({ event: "file", session: sandbox.id, op, path, error: (e as Error).message });
        throw e;
      }
    };
    const view = Object.create(sandbox) as Sandbox;
    Object.assign(view, {
      exec: async (command: string, options?: ExecOptions): Promise<ExecResult> => {
        entry.busy++;
        touch();
        try {
          const r = await sandbox.exec(command, options);
          audit.write({
            event: "exec",
            session: sandbox.id,
            command,
            exitCode: r.exitCode,
            timedOut: r.timedOut,
            durationMs: r.durationMs,
            ...(r.oomKilled ? { oomKilled: true } : {}),
          });
          return r;
        } finally {
          entry.busy--;
          touch();
        }
      },
      readFile: (path: string) => file("read", path, () => sandbox.readFile(path)),
      writeFile: (path: string, data: string | Uint8Array) =>
        file(
          "write",
          path,
          () => sandbox.writeFile(path, data),
          typeof data === "string" ? Buffer.byteLength(data) : data.length,
        ),
      destroy: () => this.destroy(sandbox.id, "requested"),
    });
    return view;
  }

  async destroy(id: string, reason = "requested"): Promise<void> {
    const e = this.sessions.get(id);
    if (!e) return;
    this.sessions.delete(id);
    try {
      await e.sandbox.destroy();
    } finally {
      this.audit.write({ event: "destroy", session: id, reason });
      this.wakeOne();
    }
  }

  private wakeOne(): void {
    this.waiting.shift()?.();
  }

  /** Destroys idle and too-old sessions and cleans leftovers of crashed runs. */
  async reap(options: { docker?: boolean } = {}): Promise<string[]> {
    const now = Date.now();
    const gone: string[] = [];
    for (const [id, e] of this.sessions) {
      const idle = e.busy === 0 && now - e.lastUsedAt > this.idleTtlMs;
      const old = now - e.createdAt > this.maxAgeMs;
      if (!idle && !old) continue;
      const reason = old ? "max age" : "idle";
      await this.destroy(id, reason);
      this.audit.write({ event: "reap", session: id, reason, what: "session" });
      gone.push(id);
    }
    await reapLeftovers({
      live: new Set(this.sessions.keys()),
      maxAgeMs: this.maxAgeMs,
      docker: options.docker ?? false,
      onReap: (session, what) => this.audit.write({ event: "reap", session, reason: "leftover", what }),
    }).catch(() => {});
    return gone;
  }

  /** Destroys every session and stops the reaper. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await Promise.all([...this.sessions.keys()].map((id) => this.destroy(id, "shutdown")));
  }
}
