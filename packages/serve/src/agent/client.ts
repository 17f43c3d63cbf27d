// Host side of the in-sandbox agent (see source.ts): one Unix socket connection, requests with
// ids, and the events the agent pushes (process output and exits, directory changes). What the
// agent sends is untrusted — it runs as the sandbox user — so lines are size-capped and parsed
// defensively; a line that breaks the protocol ends the connection, never the service.
import { EventEmitter } from "node:events";
import type { Socket } from "node:net";

/** Longest line accepted from the agent (a 256 KiB file chunk is ~350 KB of base64). */
const MAX_LINE_BYTES = 4 * 1024 * 1024;

export class AgentError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface AgentEntry {
  name: string;
  type: "file" | "dir";
  path: string;
  size: number;
  mode: number;
  permissions: string;
  owner: string;
  group: string;
  mtime: number;
  symlink?: string;
  /** User-defined file metadata (the file's `user.e2b.*` extended attributes). */
  meta?: Record<string, string>;
}

export type AgentEvent =
  | { ev: "out"; pid: number; fd: 1 | 2; data: string }
  | {
      ev: "exit";
      pid: number;
      exited: boolean;
      code: number;
      signal?: string;
      /** Set by the host (never taken from the agent) when the sandbox itself went away. */
      sandboxGone?: true;
    }
  | {
      ev: "fs";
      wid: string;
      name: string;
      type: "create" | "write" | "remove" | "chmod";
      /** With includeEntry: the entry as the agent saw it (untrusted, like everything it sends). */
      entry?: AgentEntry;
    }
  | { ev: "fs_end"; wid: string; err: string };

interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
  onReply?: (v: unknown) => void;
}

export class AgentClient extends EventEmitter {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private buf = "";
  private closedError: Error | undefined;

  constructor(private readonly socket: Socket) {
    super();
    socket.setEncoding("utf8");
    socket.on("data", (d: string) => this.onData(d));
    socket.on("error", (e) => this.close(e));
    socket.on("close", () => this.close(new AgentError("unavailable", "sandbox agent is gone")));
  }

  get alive(): boolean {
    return this.closedError === undefined;
  }

  /**
   * Sends one request; resolves with the agent's result or rejects with an AgentError.
   * `onReply` runs synchronously on the reply, before any event that followed it is dispatched
   * (a process's output can arrive in the same read as the reply that names its pid).
   */
  call<T>(op: string, args: Record<string, unknown> = {}, onReply?: (v: T) => void): Promise<T> {
    if (this.closedError) return Promise.reject(this.closedError);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, {
        resolve: resolve as (v: unknown) => void,
        reject,
        ...(onReply ? { onReply: onReply as (v: unknown) => void } : {}),
      });
      this.socket.write(`${JSON.stringify({ ...args, id, op })}\n`);
    });
  }

  close(err: Error = new AgentError("unavailable", "sandbox agent closed")): void {
    if (this.closedError) return;
    this.closedError = err;
    this.socket.destroy();
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
    this.emit("close", err);
  }

  private onData(d: string): void {
    this.buf += d;
    let nl = this.buf.indexOf("\n");
    while (nl >= 0) {
      const line = this.buf.slice(0, nl);
      this.buf = this.buf.slice(nl + 1);
      this.onLine(line);
      if (this.closedError) return;
      nl = this.buf.indexOf("\n");
    }
    if (this.buf.length > MAX_LINE_BYTES)
      this.close(new AgentError("internal", "sandbox agent sent an oversized message"));
  }

  private onLine(line: string): void {
    let m: Record<string, unknown>;
    try {
      m = JSON.parse(line) as Record<string, unknown>;
    } catch {
      this.close(new AgentError("internal", "sandbox agent broke the protocol"));
      return;
    }
    if (typeof m.ev === "string") {
      delete m.sandboxGone;
      this.emit("event", m as unknown as AgentEvent);
      return;
    }
    const p = typeof m.id === "number" ? this.pending.get(m.id) : undefined;
    if (!p) return;
    if (Array.isArray(m.err)) {
      this.pending.delete(m.id as number);
      p.reject(new AgentError(String(m.err[0]), String(m.err[1])));
    } else {
      this.pending.delete(m.id as number);
      p.onReply?.(m.ok);
      p.resolve(m.ok);
    }
  }
}
