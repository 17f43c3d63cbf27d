// The `run_task` tool of `hands mcp-server`: one task run to its end in a workspace, through
// the composition root like `hands "task"` (trust, sandbox, policy, session file), with the
// answer, the files it changed and the session id to continue with. Nobody is at a keyboard:
// a call that needs a person's yes is refused with a reason the model reads.
import { existsSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import { type AgentEvent, type ApprovalMode, type FileChange, loadFileStates } from "@hands/agent";
import { isInside } from "@hands/sandbox/base";
import { openSession, realFolder, SettingsError } from "@hands/sdk/root";
import type { CliArgs } from "../args.js";

export const RUN_TASK_TOOL = {
  name: "run_task",
  title: "Run a Hands coding task",
  description: [
    "Runs a coding task with Hands, a coding agent, in a workspace folder: it reads, edits files and runs commands",
    "(in a sandbox) until the task is done, then returns its answer, the files it changed and a session id.",
    "Pass that sessionId to a later call to continue the same conversation.",
  ].join(" "),
  inputSchema: {
    type: "object" as const,
    properties: {
      task: { type: "string", description: "What to do, in words", minLength: 1 },
      workspace: {
        type: "string",
        description:
          "The folder to work in (absolute, or relative to the server's folder); default: the server's folder",
      },
      approval: {
        type: "string",
        enum: ["auto", "read-only"],
        description:
          "auto: writes and commands run (the command policy still refuses); read-only: nothing is written or run",
      },
      sandbox: {
        type: "string",
        enum: ["bwrap", "docker", "local"],
        description:
          "Where commands run (default: the server's); local only when the server itself runs commands unisolated",
      },
      sessionId: { type: "string", description: "Continue this earlier session (from a previous result)" },
    },
    required: ["task"],
    additionalProperties: false,
  },
  outputSchema: {
    type: "object" as const,
    properties: {
      status: { type: "string" },
      answer: { type: "string" },
      reason: { type: "string" },
      sessionId: { type: "string" },
      filesChanged: {
        type: "array",
        items: {
          type: "object",
          properties: {
            path: { type: "string" },
            change: { type: "string", enum: ["created", "modified", "deleted"] },
          },
          required: ["path", "change"],
        },
      },
      changesIncomplete: {
        type: "boolean",
        description: "true: the workspace has more files than were compared, some changes may be missing",
      },
      steps: { type: "number" },
    },
    required: ["status", "answer", "sessionId", "filesChanged", "steps"],
  },
};

export interface RunTaskInput {
  task: string;
  workspace?: string;
  approval?: "auto" | "read-only";
  sandbox?: "bwrap" | "docker" | "local";
  sessionId?: string;
}

export interface RunTaskOutput {
  status: string;
  answer: string;
  reason?: string;
  sessionId: string;
  filesChanged: { path: string; change: FileChange }[];
  changesIncomplete?: boolean;
  steps: number;
  [key: string]: unknown;
}

export class TaskInputError extends Error {}

/** The call's arguments, checked (the schema is the contract; anything else is refused). */
export function checkInput(args: unknown): RunTaskInput {
  if (!args || typeof args !== "object" || Array.isArray(args))
    throw new TaskInputError("arguments must be an object");
  const a = args as Record<string, unknown>;
  for (const k of Object.keys(a))
    if (!(k in RUN_TASK_TOOL.inputSchema.properties)) throw new TaskInputError(`unknown argument ${k}`);
  if (typeof a["task"] !== "string" || !a["task"].trim())
    throw new TaskInputError("task must be a non-empty string");
  for (const k of ["workspace", "sessionId"])
    if (a[k] !== undefined && typeof a[k] !== "string") throw new TaskInputError(`${k} must be a string`);
  if (a["approval"] !== undefined && a["approval"] !== "auto" && a["approval"] !== "read-only")
    throw new TaskInputError('approval must be "auto" or "read-only"');
  if (a["sandbox"] !== undefined && !["bwrap", "docker", "local"].includes(a["sandbox"] as string))
    throw new TaskInputError('sandbox must be "bwrap", "docker" or "local"');
  return a as unknown as RunTaskInput;
}

export interface RunTaskOptions {
  /** The server's flags (model, sandbox, approval…). */
  flags: CliArgs;
  /** Tasks may run in this folder and the folders inside it, nowhere else. */
  root: string;
  env: NodeJS.ProcessEnv;
  signal: AbortSignal;
  /** Told what the run is doing (an MCP progress notification each). */
  progress?: (message: string) => void;
  log: (text: string) => void;
}

/** Sessions with a task running: a second call continuing one of them is refused. */
const busy = new Set<string>();

export async function runTask(input: RunTaskInput, o: RunTaskOptions): Promise<RunTaskOutput> {
  const root = realFolder(o.root, "server folder");
  const asked = input.workspace
    ? isAbsolute(input.workspace)
      ? input.workspace
      : resolve(root, input.workspace)
    : root;
  const workspace = realFolder(asked, "workspace");
  if (!isInside(root, workspace))
    throw new TaskInputError(
      `workspace ${input.workspace} is outside the folder this server works in (${root})`,
    );
  if (input.sessionId && busy.has(input.sessionId))
    throw new TaskInputError(`session ${input.sessionId} is running a task already`);
  // The caller may narrow the server's approval mode, never widen it.
  const serverMode = (o.flags.approval ?? "auto") as ApprovalMode;
  const mode: ApprovalMode =
    input.approval === "read-only" || serverMode === "read-only" ? "read-only" : serverMode;
  const sandbox = sandboxFor(o.flags.sandbox, input.sandbox);
  const session = await openSession({
    workspace,
    flags: { ...o.flags, approval: mode, ...(sandbox ? { sandbox } : {}) },
    env: o.env,
    approvalDefault: "auto",
    save: true,
    ...(input.sessionId ? { resume: input.sessionId } : {}),
    report: (_level, text) => o.log(`${text.trimEnd()}\n`),
  }).catch((e: unknown) => {
    if (e instanceof SettingsError) throw new TaskInputError(e.message);
    throw e;
  });
  busy.add(session.id);
  try {
    const saved = session.writer?.meta.workspace;
    if (saved && saved !== workspace)
      throw new TaskInputError(`session ${session.id} belongs to ${saved}, not ${workspace}`);
    const changed = new Map<string, FileChange>();
    const onEvent = (e: AgentEvent) => {
      if (e.type === "tool_start") o.progress?.(`${e.name}${describe(e.args)}`);
      else if (e.type === "model_request") o.progress?.(`step ${e.step}: asking the model`);
      else if (e.type === "tool_end" && !e.isError && typeof e.data?.["path"] === "string") {
        const path = e.data["path"] as string;
        const abs = isAbsolute(path) ? path : resolve(workspace, path);
        const rel = relative(workspace, abs);
        if (e.name === "write_file" || e.name === "edit_file")
          changed.set(
            rel,
            changed.get(rel) === "created" || e.data["created"] === true ? "created" : "modified",
          );
      }
    };
    // Sizes and mtimes around the run: what commands changed too (the tools say only their own).
    const states = await loadFileStates();
    const skip = [session.dataDir];
    const before = await states.fileStates(workspace, { signal: o.signal, skip });
    const result = await session.run(input.task, { signal: o.signal, onEvent });
    const after = await states.fileStates(workspace, { skip });
    // The comparison is the truth for the files it sees; a tool's own report counts for the
    // others (ignored by .gitignore, or past the cap) when the file is still there.
    const found = new Map(states.changedFiles(before, after));
    for (const [path, change] of changed)
      if (
        !found.has(path) &&
        !before.files.has(path) &&
        !after.files.has(path) &&
        existsSync(join(workspace, path))
      )
        found.set(path, change);
    return {
      status: result.status,
      answer: result.answer,
      ...(result.reason ? { reason: result.reason } : {}),
      sessionId: session.id,
      filesChanged: [...found]
        .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
        .map(([path, change]) => ({ path, change })),
      ...(before.capped || after.capped ? { changesIncomplete: true } : {}),
      steps: result.steps,
    };
  } finally {
    busy.delete(session.id);
    await session.close();
  }
}

/**
 * The sandbox a call asks for, if it may have it: an isolating one always, "local" (commands
 * run as the server's user, unisolated) only when the server itself runs that way.
 */
export function sandboxFor(server: string | undefined, asked: RunTaskInput["sandbox"]): string | undefined {
  if (asked === undefined || asked === server) return undefined;
  if (asked === "local")
    throw new TaskInputError(
      `sandbox "local" runs commands unisolated; this server uses ${server ?? "its default isolating sandbox"}`,
    );
  return asked;
}

function describe(args: unknown): string {
  const a = (args && typeof args === "object" ? args : {}) as Record<string, unknown>;
  const v = a["path"] ?? a["command"] ?? a["pattern"];
  return typeof v === "string" ? ` ${v.replace(/\s+/g, " ").slice(0, 80)}` : "";
}

/** The result as text for the calling model: the answer, then what changed and how to go on. */
export function resultText(r: RunTaskOutput): string {
  const lines = [
    r.status === "done"
      ? r.answer
      : `The task ended: ${r.status}${r.reason ? ` (${r.reason})` : ""}.\n${r.answer}`,
  ];
  lines.push("");
  lines.push(
    r.filesChanged.length
      ? `Files changed:\n${r.filesChanged.map((f) => `- ${f.path} (${f.change})`).join("\n")}`
      : "No files changed.",
  );
  if (r.changesIncomplete)
    lines.push(`(The workspace has too many files to compare them all: changes may be missing.)`);
  lines.push(`Session: ${r.sessionId} (pass it as sessionId to continue).`);
  return lines.join("\n").trim();
}
