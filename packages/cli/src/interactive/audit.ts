// The command policy as this workspace and user configure it, and the audit log of every
// approval decision (JSONL under the data directory, one line per decision).
import { appendFileSync, existsSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import {
  type AgentEvent,
  builtinRules,
  CommandPolicy,
  loadShellParser,
  PolicyError,
  type PolicyRule,
  parsePolicyRules,
  readPolicyFile,
  readSettingsFile,
  UnsafeFileError,
} from "@hands/agent";
import { UsageError } from "../args.js";
import { userConfigPath } from "../paths.js";
import { untrustedPolicy } from "../trust.js";

export function policyPaths(workspace: string, env: NodeJS.ProcessEnv = process.env) {
  return {
    project: join(workspace, ".hands", "policy.json"),
    user: join(dirname(userConfigPath(env)), "policy.json"),
  };
}

/**
 * Awaited before loadPolicy: a policy file's examples are checked by the shell parser, which
 * otherwise loads only when the first command is judged.
 */
export async function preparePolicy(workspace: string): Promise<void> {
  const paths = policyPaths(workspace);
  if (existsSync(paths.project) || existsSync(paths.user)) await loadShellParser();
}

/**
 * Project rules first, then the user's, between the built-in denials and "ask" rules. An
 * untrusted folder's "allow" rules are left out (`ignored` names them).
 */
export function loadPolicy(
  workspace: string,
  trusted: boolean,
): { policy: CommandPolicy; ignored: string[] } {
  const paths = policyPaths(workspace);
  try {
    const project = readProjectRules(paths.project);
    const { rules, ignored } = trusted ? { rules: project, ignored: [] } : untrustedPolicy(project);
    const { deny, ask } = builtinRules();
    return { policy: new CommandPolicy([...rules, ...readPolicyFile(paths.user)], deny, ask), ignored };
  } catch (err) {
    if (err instanceof PolicyError) throw new UsageError(`invalid command policy: ${err.message}`);
    throw err;
  }
}

/** The workspace's rules, read so that a FIFO or a huge file planted there cannot hang the start. */
function readProjectRules(path: string): PolicyRule[] {
  let text: string | undefined;
  try {
    text = readSettingsFile(path);
  } catch (err) {
    if (err instanceof UnsafeFileError) throw new UsageError(`invalid command policy: ${err.message}`);
    throw err;
  }
  return text === undefined ? [] : parsePolicyRules(text, path);
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
