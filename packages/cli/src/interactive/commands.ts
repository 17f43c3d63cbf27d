// Slash commands of the interactive session.
import { APPROVAL_MODES, type ApprovalMode, type UndoResult } from "@hands/agent";
import { formatCost, listedModels, type Message } from "@hands/llm";
import { mainArgument } from "../render.js";
import { formatSessions } from "../sessions-command.js";
import type { SessionState } from "./session.js";
import { compactedHistory, undoNote } from "./session-notes.js";
import { capLines, colorDiff, formatTokens } from "./ui.js";

/** The `/` menu: each command with what it does (the same as /help). */
export const SLASH_COMMANDS: { name: string; description: string; argumentHint?: string }[] = [
  { name: "help", description: "list the commands and keys" },
  { name: "model", argumentHint: "[NAME]", description: "the model and the endpoint's models, or switch" },
  { name: "plan", argumentHint: "TASK", description: "plan first (read-only), accept or edit, then execute" },
  { name: "approval", argumentHint: "[auto|ask|read-only]", description: "show or set approvals" },
  { name: "compact", description: "summarise the conversation to free context" },
  { name: "cost", description: "tokens and cost of this session" },
  { name: "diff", description: "what this session changed in the workspace" },
  { name: "undo", description: "put back the files changed by the last request" },
  { name: "expand", argumentHint: "[N]", description: "the full output of the last (or Nth last) tool call" },
  { name: "thinking", argumentHint: "[N]", description: "the model's full reasoning in the last reply" },
  { name: "sessions", description: "saved sessions (resume with hands --resume ID)" },
  { name: "exit", description: "quit (also Ctrl-D)" },
];

export const SLASH_HELP = `Commands:
  /help              this list
  /model [NAME]      show the model and the models the endpoint lists, or switch
  /plan TASK         plan first (read-only), accept or edit the checklist ($EDITOR), then execute it
  /approval [MODE]   show or set approvals: auto | ask | read-only
  /compact           summarise the conversation so far to free context
  /cost              tokens and cost of this session
  /diff              what this session changed in the workspace
  /undo              put back the files changed by the last request
  /expand [N]        the full output of the last (or Nth last) tool call
  /thinking [N]      the model's full reasoning in the last (or Nth last) reply that had any
  /sessions          saved sessions (resume with hands --resume ID)
  /exit              quit (also Ctrl-D; Ctrl-C stops a running step)
End a line with \\ to continue the request on the next line.`;

/** Keys of the terminal view (added to /help there). */
export const KEYS_HELP = `Keys:
  Enter send · Shift/Alt-Enter, Ctrl-J or \\ then Enter: new line · Tab completes
  /  the command menu · @  attach a file (fuzzy; .gitignore respected)
  Up/Down history (this workspace) · Ctrl-R search it · Ctrl-W/Alt-D kill a word · Ctrl-Y yank
  Esc or Ctrl-C stop the running request and drop the queued ones
  Up on an empty line while busy: edit the last queued request
  Ctrl-O fold/unfold the last tool's output · Ctrl-X expand a [paste] marker to edit it`;

export async function runSlashCommand(
  line: string,
  state: SessionState,
  runPlan: (task: string) => Promise<void>,
): Promise<void> {
  const [cmd = "", ...rest] = line.slice(1).split(/\s+/);
  const arg = rest.join(" ").trim();
  const { view } = state;
  const s = view.style;
  switch (cmd) {
    case "help":
    case "?":
      view.print(view.tty ? `${SLASH_HELP}\n${KEYS_HELP}` : SLASH_HELP);
      return;
    case "exit":
    case "quit":
      state.quit = true;
      return;
    case "model":
      if (arg) {
        try {
          await state.switchModel(arg);
          view.print(`Model: ${state.provider.model}`);
        } catch (e) {
          view.print(s.red(`Cannot switch model: ${(e as Error).message}`));
        }
      } else {
        view.print(`Model: ${state.provider.model} (${state.provider.name})`);
        const list = await state.endpointModels();
        if (list.ok && list.models.length)
          view.print(`The endpoint has: ${listedModels(list.models, 40)} — /model NAME switches`);
        else if (!list.ok) view.print(s.dim(`(the endpoint's models: ${list.message})`));
      }
      return;
    case "approval":
      if (arg) {
        if (!APPROVAL_MODES.includes(arg as ApprovalMode)) {
          view.print(s.red(`Unknown mode "${arg}": use ${APPROVAL_MODES.join(", ")}`));
          return;
        }
        state.mode = arg as ApprovalMode;
      }
      view.print(`Approval mode: ${state.mode}`);
      return;
    case "plan": {
      const task = arg || ((await state.input.read(`${s.cyan("plan ›")} `)) ?? "").trim();
      if (task) await runPlan(task);
      return;
    }
    case "cost": {
      const u = state.usage;
      view.print(
        `Tokens: ${formatTokens(u.inputTokens)} in (${formatTokens(u.cachedInputTokens ?? 0)} cached), ${formatTokens(u.outputTokens)} out · cost ${formatCost(u.costUsd)}`,
      );
      return;
    }
    case "diff": {
      const diff = await state.checkpoints.diff().catch((e: Error) => s.red(`Cannot diff: ${e.message}`));
      view.print(diff ? colorDiff(capLines(diff, MAX_DIFF_LINES), s) : "No changes in this session.");
      return;
    }
    case "undo":
      await undo(state);
      return;
    case "expand": {
      const t = nthLast(view.tools, arg);
      if (!t) view.print("No tool call yet.");
      else view.print(`${s.bold(t.name)} ${mainArgument(t.name, t.args)}\n${t.output}`);
      return;
    }
    case "thinking": {
      const t = nthLast(view.thoughts, arg);
      view.print(t ? s.dim(t) : "No reasoning shown yet (the model did not think aloud).");
      return;
    }
    case "sessions":
      view.print(formatSessions(state.store.list().slice(0, 15)));
      return;
    case "compact":
      await compact(state);
      return;
    default:
      view.print(s.red(`Unknown command /${cmd}. /help lists them.`));
  }
}

const MAX_DIFF_LINES = 2000;

/** The Nth last item for `/expand N` and `/thinking N` (the last one without a valid N). */
function nthLast<T>(items: readonly T[], arg: string): T | undefined {
  const n = arg ? Number(arg) : 1;
  return items[items.length - (Number.isInteger(n) && n > 0 ? n : 1)];
}

/** Reverts the last request's files and tells the model, so it does not trust what it saw. */
async function undo(state: SessionState): Promise<void> {
  const { view } = state;
  const s = view.style;
  let r: UndoResult | undefined;
  try {
    r = await state.checkpoints.undo();
  } catch (e) {
    view.print(s.red(`Cannot undo: ${(e as Error).message}`));
    return;
  }
  if (!r) {
    view.print("Nothing to undo.");
    return;
  }
  const label = r.label.slice(0, 60);
  if (r.paths.length) view.print(s.green(`Undone: ${r.paths.join(", ")} (from "${label}")`));
  else view.print(`Nothing was reverted for "${label}".`);
  for (const k of r.kept) view.print(s.yellow(`  left as it is: ${k.path} (${k.why})`));
  const [note, ack] = undoNote(r.label, r.paths);
  state.history.push(note, ack);
  state.writer?.message(note);
  state.writer?.message(ack);
}

/**
 * Replaces the conversation with a summary of it: with memory, a memory chunk that points back
 * to every message (all stay recallable); without, the model's own summary.
 */
async function compact(state: SessionState): Promise<void> {
  const { view } = state;
  if (state.history.length === 0) {
    view.print("Nothing to compact.");
    return;
  }
  view.startSpinner("compacting");
  try {
    const before = state.history.length;
    const summary = (await state.memory?.compact()) ?? (await modelSummary(state));
    state.history = compactedHistory(summary);
    view.stopSpinner();
    state.writer?.append({ type: "compact", time: Date.now(), messages: state.history });
    view.print(
      `Compacted ${before} messages into a summary (${state.history[0]!.content.length} characters).`,
    );
  } catch (e) {
    view.stopSpinner();
    view.print(view.style.red(`Compacting failed: ${(e as Error).message}`));
  }
}

/** The model's own summary of the conversation, as the first message of the new history. */
async function modelSummary(state: SessionState): Promise<string> {
  const messages: Message[] = [
    { role: "system", content: "You summarise coding sessions for the agent that continues them." },
    ...state.history.filter((m) => m.role !== "tool"),
    {
      role: "user",
      content:
        "Summarise this conversation for yourself: the requests, what was done (files, commands, results), what is left, and facts to remember. Be concise.",
    },
  ];
  // Tool results are left out, so tool calls go too: the summary needs the words, not the calls.
  const plain = messages.map(
    (m): Message => (m.role === "assistant" ? { role: "assistant", content: m.content } : m),
  );
  const r = await state.provider.complete({ messages: plain, tools: [] });
  return `Summary of the conversation so far:\n${r.message.content.trim()}`;
}
