// The audit log: one JSON object per line for each session event (create, exec, file
// operations, destroy, reap), appended to a file the user can keep and grep.
import { appendFileSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { ProxyLogEntry } from "./proxy-policy.js";

export type AuditEvent =
  | { event: "create"; session: string; kind: string; workspace: string }
  | {
      event: "exec";
      session: string;
      command: string;
      exitCode: number | null;
      timedOut: boolean;
      durationMs: number;
      oomKilled?: boolean;
    }
  | {
      event: "file";
      session: string;
      op: "read" | "write" | "upload" | "download" | "snapshot" | "restore";
      path: string;
      bytes?: number;
      error?: string;
    }
  | { event: "destroy"; session: string; reason: string }
  | { event: "reap"; session: string; reason: string; what: string }
  /** A decision of the allow-list proxy (shared by the sessions it serves). */
  | ({ event: "network" } & ProxyLogEntry);

export class AuditLog {
  constructor(readonly path: string | undefined) {
    if (path) mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  }

  write(e: AuditEvent): void {
    if (!this.path) return;
    // Synchronous appends keep the order of events and survive a crash right after.
    appendFileSync(this.path, `${JSON.stringify({ time: new Date().toISOString(), ...e })}\n`, {
      mode: 0o600,
    });
  }
}
