// The sandboxes this machine's hands runs used, from the data folder's sandbox-audit.jsonl
// (written by the sandbox package's session manager, read back through its own reader): one
// row per session with its backend, times and counts, and each session's audit trail.
import { join } from "node:path";
import { type AuditRecord, readAuditLog } from "@hands/sandbox";

export interface LocalSandbox {
  session: string;
  kind: string;
  workspace: string;
  created: string;
  /** When it was destroyed or reaped (absent: still open, or its process died first). */
  ended?: string;
  endReason?: string;
  state: "open" | "destroyed" | "reaped";
  execs: number;
  failedExecs: number;
  execMs: number;
  fileOps: number;
}

function log(dataDir: string) {
  return readAuditLog(join(dataDir, "sandbox-audit.jsonl"));
}

export function localSandboxes(dataDir: string): { sandboxes: LocalSandbox[]; unreadable: number } {
  const { records, unreadable } = log(dataDir);
  const by = new Map<string, LocalSandbox>();
  const of = (r: AuditRecord & { session: string }) => {
    let s = by.get(r.session);
    if (!s) {
      s = {
        session: r.session,
        kind: "?",
        workspace: "",
        created: r.time,
        state: "open",
        execs: 0,
        failedExecs: 0,
        execMs: 0,
        fileOps: 0,
      };
      by.set(r.session, s);
    }
    return s;
  };
  for (const r of records) {
    if (!("session" in r) || typeof r.session !== "string") continue;
    const s = of(r as AuditRecord & { session: string });
    switch (r.event) {
      case "create":
        s.kind = r.kind;
        s.workspace = r.workspace;
        s.created = r.time;
        break;
      case "exec":
        s.execs++;
        if (r.exitCode !== 0) s.failedExecs++;
        s.execMs += r.durationMs;
        break;
      case "file":
        s.fileOps++;
        break;
      case "destroy":
      case "reap":
        s.state = r.event === "destroy" ? "destroyed" : "reaped";
        s.ended = r.time;
        s.endReason = r.reason;
        break;
    }
  }
  return { sandboxes: [...by.values()].sort((a, b) => b.created.localeCompare(a.created)), unreadable };
}

export function localSandboxTrail(dataDir: string, session: string): AuditRecord[] {
  return log(dataDir).records.filter((r) => "session" in r && r.session === session);
}
