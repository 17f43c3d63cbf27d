// The approval gate: combines the approval mode, the command policy, "always" answers and a
// person's answers into the agent's approve hook. Allowed calls wait for the turn's checkpoint.
import {
  type ApprovalDecision,
  type ApprovalRequest,
  type ApproveHook,
  settingsWriteTarget,
} from "../approval.js";
import { type CommandPolicy, normalizeCommand, type PolicyDecision } from "./command-policy.js";
import { previewWrite, type WritePreview, writeTarget } from "./preview.js";
import { understand } from "./shell-meaning.js";
import { loadShellParser } from "./shell-parse.js";

/**
 * The folder each session's shell is in, as the commands allowed so far left it (keyed by the
 * session's policy: one gate is made per request, the shell lives as long as the session). The
 * sandbox's shell keeps its folder from one command to the next, so `cd /` and then `rm -rf *`
 * is judged as `rm -rf /*`.
 */
const sessionFolders = new WeakMap<CommandPolicy, string>();

export type ApprovalMode = "auto" | "ask" | "read-only";
export const APPROVAL_MODES: ApprovalMode[] = ["auto", "ask", "read-only"];

export type ApprovalKind = "write" | "command" | "other";

export interface ApprovalPrompt {
  name: string;
  args: Record<string, unknown>;
  kind: ApprovalKind;
  /** For commands: the command line (or code) that would run. */
  command?: string;
  /** For writes: the diff. */
  preview?: WritePreview;
  /** Set when a policy rule asked for the confirmation. */
  policy?: PolicyDecision;
  /** Set when the call writes Hands' own settings (.hands/): the path, relative to the workspace. */
  settingsPath?: string;
  signal: AbortSignal;
}

export interface UserAnswer {
  answer: "yes" | "no" | "always";
  reason?: string;
}

export interface GateOptions {
  workspace: string;
  policy: CommandPolicy;
  /** Read on every call, so /approval can change it mid-session. */
  mode: () => ApprovalMode;
  /** Asks a person; without it, anything that needs asking is refused. */
  askUser?: (prompt: ApprovalPrompt) => Promise<UserAnswer>;
  /** Awaited before each allowed call runs, with the file it writes when it is a write (checkpoints). */
  beforeChange?: (abs: string | undefined) => Promise<void>;
}

export function classify(
  name: string,
  args: Record<string, unknown>,
): { kind: ApprovalKind; command?: string } {
  if (name === "run_command" && typeof args["command"] === "string")
    return { kind: "command", command: args["command"] };
  if (name === "execute_python" && typeof args["code"] === "string")
    return { kind: "command", command: args["code"] };
  if (name === "write_file" || name === "edit_file") return { kind: "write" };
  return { kind: "other" };
}

/**
 * What an "always" answer covers: all writes, one tool, or for a command line each program it
 * runs with its first argument (`npm test`, `git push`). A later command is covered only when
 * every program it runs is: "always" for `npm test` does not cover `npm test && curl … | sh`.
 */
/** Records the folder an allowed command leaves the session's shell in. */
function noteFolder(
  policy: CommandPolicy,
  command: string,
  context: { cwd: string; workspaces: string[] },
): void {
  sessionFolders.set(policy, understand(command, context).cwd);
}

function alwaysKeys(name: string, kind: ApprovalKind, command?: string): string[] {
  if (kind === "write") return ["write"];
  if (kind === "command" && name === "run_command" && command) {
    const meaning = understand(command);
    if (!meaning.parsed || meaning.invocations.length === 0) return [`line:${normalizeCommand(command)}`];
    return meaning.invocations.map((i) => `cmd:${[i.name, ...i.args.slice(0, 1)].join(" ")}`);
  }
  return [`tool:${name}`];
}

/**
 * The "always" key of a web_fetch (its origin: yes-always to one site is not a yes to every
 * site) or a write_database (its database); undefined for other tools.
 */
function reachKey(name: string, args: Record<string, unknown>): string | undefined {
  if (name === "web_fetch" && typeof args["url"] === "string") {
    try {
      return `web:${new URL(args["url"]).origin}`;
    } catch {
      return `web:${args["url"]}`;
    }
  }
  if (name === "write_database") return `db:${String(args["database"])}`;
  return undefined;
}

/** Tools whose calls a person approves in every mode (not only "ask"): database writes. */
const ALWAYS_ASKED = new Set(["write_database"]);

export function createApprovalGate(opts: GateOptions): ApproveHook {
  const always = new Set<string>();
  return async (req: ApprovalRequest): Promise<ApprovalDecision> => {
    const decision = await decide(req);
    if (decision.allow && opts.beforeChange)
      await opts.beforeChange(writeTarget(opts.workspace, req.name, req.args));
    return decision;
  };

  async function decide(req: ApprovalRequest): Promise<ApprovalDecision> {
    const { name, args } = req;
    const { kind, command } = classify(name, args);
    const mode = opts.mode();
    if (mode === "read-only")
      return {
        allow: false,
        source: "mode",
        reason: "the session is read-only (approval mode read-only): no writes or commands",
      };

    // Writes into .hands/ would plant settings for the next run: always asked, never "always".
    const settingsPath = await settingsWriteTarget(opts.workspace, name, args);
    let policy: PolicyDecision | undefined;
    if (kind === "command" && name === "run_command" && command) {
      // The shell parser loads on the first command; without it nothing can be judged.
      try {
        await loadShellParser();
      } catch (err) {
        return {
          allow: false,
          source: "policy",
          reason: `the command policy's shell parser could not load (${(err as Error).message}), so no command can be judged`,
        };
      }
      const context = {
        cwd: sessionFolders.get(opts.policy) ?? ".",
        workspaces: [opts.workspace, "/workspace"],
      };
      policy = opts.policy.evaluate(command, context);
      const rule = policy?.rule?.name;
      if (policy?.action === "deny")
        return {
          allow: false,
          source: "policy",
          ...(rule ? { rule } : {}),
          reason: policy.reason ?? "denied by the command policy",
        };
      if (policy?.action === "allow" && settingsPath === undefined) {
        noteFolder(opts.policy, command, context);
        return { allow: true, source: "policy", ...(rule ? { rule } : {}) };
      }
    }
    const decision = await confirm(req, kind, command, policy, settingsPath, mode);
    if (decision.allow && kind === "command" && name === "run_command" && command)
      noteFolder(opts.policy, command, {
        cwd: sessionFolders.get(opts.policy) ?? ".",
        workspaces: [opts.workspace, "/workspace"],
      });
    return decision;
  }

  async function confirm(
    req: ApprovalRequest,
    kind: ApprovalKind,
    command: string | undefined,
    policy: PolicyDecision | undefined,
    settingsPath: string | undefined,
    mode: ApprovalMode,
  ): Promise<ApprovalDecision> {
    const { name, args } = req;
    // "Always" for what the policy asked about covers that same line for that same rule only:
    // yes-always to `rm -rf ~/.cache/x` must not let `rm -rf ~/.ssh` through unasked.
    const keys =
      policy?.action === "ask" && command
        ? [`policy:${policy.rule?.name ?? ""}:${normalizeCommand(command)}`]
        : [reachKey(name, args) ?? alwaysKeys(name, kind, command)].flat();
    if (settingsPath === undefined) {
      const mustAsk = policy?.action === "ask" || mode === "ask" || ALWAYS_ASKED.has(name);
      if (!mustAsk) return { allow: true, source: "mode" };
      if (keys.every((k) => always.has(k)))
        return { allow: true, source: "session", reason: "allowed for this session" };
    }
    const rule = settingsPath !== undefined ? "protect .hands/" : policy?.rule?.name;
    if (!opts.askUser)
      return {
        allow: false,
        source: policy || settingsPath !== undefined ? "policy" : "mode",
        ...(rule ? { rule } : {}),
        reason:
          settingsPath !== undefined
            ? `${settingsPath} is in .hands/, Hands' own settings for this project: writing there needs a person's explicit approval, and nobody can be asked here`
            : `needs a person's approval${policy?.reason ? ` (${policy.reason})` : ""}, and nobody can be asked here`,
      };
    const preview = kind === "write" ? await previewWrite(opts.workspace, name, args) : undefined;
    const answer = await opts.askUser({
      name,
      args,
      kind,
      ...(command ? { command } : {}),
      ...(preview ? { preview } : {}),
      ...(policy ? { policy } : {}),
      ...(settingsPath !== undefined ? { settingsPath } : {}),
      signal: req.signal,
    });
    if (answer.answer === "no")
      return {
        allow: false,
        source: "user",
        ...(rule ? { rule } : {}),
        reason: answer.reason?.trim() || "the user said no",
      };
    if (answer.answer === "always" && settingsPath === undefined) for (const k of keys) always.add(k);
    return { allow: true, source: "user", ...(rule ? { rule } : {}) };
  }
}
