// The audit log of every approval decision (JSONL under the data directory, one line per decision).
import { appendFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { AgentEvent } from "@hands/agent";

/** An event listener that appends approval decisions to <data>/audit.jsonl. */
export function auditListener(dataDir: string, sessionId: string): (e: AgentEvent) => void {
  const path = join(dataDir, "audit.jsonl");
  let ready = false;
  // Arguments of the calls in flight only: the audit line needs them, a long session must not keep them all.
  const calls = new Map<string, unknown>();
  return (e) => {
    if (e.type === "tool_start") calls.set(e.callId, e.args);
    if (e.type === "tool_end") calls.delete(e.callId);
    if (e.type !== "approval") return;
    if (!ready) {
      mkdirSync(dataDir, { recursive: true, mode: 0o700 });
      ready = true;
    }
    const line = {
      time: new Date(e.time).toISOString(),
      session: sessionId,
      tool: e.name,
      args: calls.get(e.callId),
      decision: e.allow ? "allow" : "deny",
      source: e.source,
      ...(e.rule ? { rule: e.rule } : {}),
      ...(e.reason ? { reason: e.reason } : {}),
    };
    appendFileSync(path, `${JSON.stringify(line)}\n`, { mode: 0o600 });
  };
}
