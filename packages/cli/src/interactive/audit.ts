// The command policy as this workspace and user configure it, and the audit log of every
// approval decision (JSONL under the data directory, one line per decision).
import { appendFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { type AgentEvent, type CommandPolicy, loadCommandPolicy, PolicyError } from "@hands/agent";
import { UsageError } from "../args.js";
import { userConfigPath } from "../paths.js";

export function policyPaths(workspace: string, env: NodeJS.ProcessEnv = process.env) {
  return {
    project: join(workspace, ".hands", "policy.json"),
    user: join(dirname(userConfigPath(env)), "policy.json"),
  };
}

export function loadPolicy(workspace: string): CommandPolicy {
  try {
    return loadCommandPolicy(policyPaths(workspace));
  } catch (err) {
    if (err instanceof PolicyError) throw new UsageError(`invalid command policy: ${err.message}`);
    throw err;
  }
}

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
      mkdirSync(dataDir, { recursive: true });
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
    appendFileSync(path, `${JSON.stringify(line)}\n`);
  };
}
