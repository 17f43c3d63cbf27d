// The audit log: one JSON object per line for each session event (create, exec, file
// operations, destroy, reap), appended to a file the user can keep and grep.
import { appendFileSync, closeSync, constants, fstatSync, mkdirSync, openSync, readSync } from "node:fs";
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

/** One line of the audit log as written: its time (ISO) and the event. */
export type AuditRecord = AuditEvent & { time: string };

/**
 * Reads an audit log back (the last `maxBytes` of it: logs only grow). A line that is not a
 * JSON object with an event (torn by a crash, or from another version) is counted, not thrown.
 */
export function readAuditLog(
  path: string,
  maxBytes = 32 * 1024 * 1024,
): { records: AuditRecord[]; unreadable: number } {
  let text: string;
  try {
    const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const st = fstatSync(fd);
      if (!st.isFile()) return { records: [], unreadable: 0 };
      const start = Math.max(0, st.size - maxBytes);
      const buf = Buffer.alloc(st.size - start);
      let got = 0;
      while (got < buf.length) {
        const n = readSync(fd, buf, got, buf.length - got, start + got);
        if (n === 0) break;
        got += n;
      }
      text = buf.toString("utf8");
      // Started mid-file: the first line is partial.
      if (start > 0) text = text.slice(text.indexOf("\n") + 1);
    } finally {
      closeSync(fd);
    }
  } catch {
    return { records: [], unreadable: 0 };
  }
  const records: AuditRecord[] = [];
  let unreadable = 0;
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    try {
      const v = JSON.parse(line) as AuditRecord;
      if (v && typeof v === "object" && typeof v.event === "string" && typeof v.time === "string")
        records.push(v);
      else unreadable++;
    } catch {
      unreadable++;
    }
  }
  return { records, unreadable };
}
