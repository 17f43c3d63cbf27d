// The interactive session: a prompt, requests that continue one conversation, approvals,
// slash commands, plans, checkpoints for /undo, and a session file saved as it goes.
import { join, resolve } from "node:path";
import type {
  AgentEvent,
  ApprovalMode,
  ApprovalPrompt,
  RunResult,
  SessionStore,
  SessionWriter,
  TodoItem,
  TurnCheckpoints,
} from "@hands/agent";
import type { Message, Provider, Usage } from "@hands/llm";
import { type AgentMemory, openSession } from "@hands/sdk/root";
import type { CliArgs } from "../args.js";
import { extractPlan, PLAN_INSTRUCTIONS, planExecutionRequest, planRequest } from "../plan.js";
import { COLOR, PLAIN } from "../render.js";
import { makeAsker } from "./approve.js";
import { runSlashCommand } from "./commands.js";
import { LineInput } from "./input.js";
import { reviewPlan } from "./plan-review.js";
import { lastReply } from "./session-notes.js";
import { StatusBar } from "./status-bar.js";
import { askTrust } from "./trust-prompt.js";
import { SessionView } from "./ui.js";

export interface SessionState {
  args: CliArgs;
  workspace: string;
  provider: Provider;
  sandbox: string;
  mode: ApprovalMode;
  history: Message[];
  usage: Usage;
  view: SessionView;
  input: LineInput;
  checkpoints: TurnCheckpoints;
  store: SessionStore;
  writer: SessionWriter | undefined;
  /** When memory is on: it assembles every request's context, across the conversation. */
  memory: AgentMemory | undefined;
  /** Switches the model (/model). */
  switchModel(name: string): Promise<void>;
  /** Runs one request; `plan` makes it a planning request (read-only tools). */
  request(text: string, plan?: boolean): Promise<RunResult | undefined>;
  out(text: string): void;
  quit: boolean;
}

export async function runInteractive(args: CliArgs, err: (text: string) => void): Promise<number> {
  const tty = Boolean(process.stdin.isTTY && process.stdout.isTTY);
  const useColor = args.color ?? (tty && !process.env.NO_COLOR);
  const style = useColor ? COLOR : PLAIN;
  const out = (text: string) => process.stdout.write(text);
  // Memory and checkpoint warnings go through the view once there is one.
  let shown: { view: SessionView; ask: ReturnType<typeof makeAsker> } | undefined;
  let todos: TodoItem[] = [];
  const session = await openSession({
    workspace: args.cwd ?? process.cwd(),
    flags: args,
    approvalDefault: "ask",
    ...(args.resume ? { resume: args.resume } : args.continue ? { resume: "latest" } : {}),
    checkpoints: true,
    ...(args.trace ? { tracePath: resolve(args.trace) } : {}),
    onTodos: (items) => {
      todos = items;
    },
    askUser: (p: ApprovalPrompt) => shown!.ask(p),
    // In a terminal, a folder whose settings would be partly ignored asks once to be trusted.
    ...(tty ? { confirmTrust: (ignored: string[], ws: string) => askTrust(ws, ignored, style, out) } : {}),
    report: (level, text, topic) => {
      if (topic === "sandbox") err(`${text}\n`);
      else if (topic === "memory" && shown) shown.view.print(style.yellow(text));
      else if (topic === "checkpoints" && shown) shown.view.print(style.yellow(`  ! ${text}`));
      else if (topic === "mcp" && level === "warning" && shown) shown.view.print(style.yellow(`${text}\n`));
      else out(level === "warning" ? style.yellow(`${text}\n`) : style.dim(`${text}\n`));
    },
  });
  const { workspace, settings, store } = session;
  if (args.continue && !session.resumed)
    out(style.dim("No earlier session in this workspace: starting a new one.\n"));
  if (session.resumed) {
    const r = session.resumed;
    out(style.dim(`Resumed session ${r.id}: ${r.steps} steps, ${r.requests} requests.\n`));
    const reply = lastReply(session.history);
    if (reply) out(style.dim(`Last reply: ${reply.slice(0, 300)}\n`));
  }

  const view = new SessionView(out, style, tty, () => process.stdout.columns);
  const input = new LineInput(tty, join(session.dataDir, "history"));
  const sandbox = session.sandboxKind;
  shown = { view, ask: makeAsker(input, view, sandbox) };
  const { memory, instructions } = session;

  const status = (width?: number) => {
    // With memory, the context is what memory assembled, on the scale of its budget.
    if (memory) view.contextTokens = memory.contextTokens;
    const budget = memory ? memory.budget : settings.maxTokens;
    return view.statusLine({
      model: session.provider.model,
      workspace,
      sandbox,
      approval: session.mode,
      usage: session.usage,
      ...(budget ? { contextBudget: budget } : {}),
      ...(width ? { width } : {}),
    });
  };
  // While a request runs, the status line stays on the terminal's last row where that is safe.
  const bar = tty && StatusBar.supported(process.stdout) ? new StatusBar(process.stdout, status) : undefined;

  let current: AbortController | undefined;
  const checkpoints = session.checkpoints!;

  // The front end's view of the session: slash commands read and change it through here.
  const state: SessionState = {
    args,
    workspace,
    sandbox,
    view,
    input,
    checkpoints,
    store,
    memory,
    quit: false,
    out,
    get provider() {
      return session.provider;
    },
    get mode() {
      return session.mode;
    },
    set mode(m: ApprovalMode) {
      session.mode = m;
    },
    get history() {
      return session.history;
    },
    set history(h: Message[]) {
      session.history = h;
    },
    get usage() {
      return session.usage;
    },
    get writer() {
      return session.writer;
    },
    async switchModel(name: string) {
      await session.setModel(name);
    },
    async request(text: string, plan = false) {
      current = new AbortController();
      view.turnTokens = 0;
      bar?.start();
      try {
        return await session.run(text, {
          signal: current.signal,
          ...(plan ? { readOnly: true, instructions: PLAN_INSTRUCTIONS } : {}),
          onEvent: (e: AgentEvent) => {
            view.onEvent(e);
            if (e.type === "model_response" || e.type === "tool_end") bar?.draw();
          },
        });
      } finally {
        current = undefined;
        view.breakLine();
        bar?.stop();
      }
    },
  };

  // Ctrl-C: stops the running step; at the prompt, twice quits. Ctrl-D quits.
  let lastInterrupt = 0;
  const onInterrupt = () => {
    if (input.suspended) return; // the editor has the terminal and its own Ctrl-C
    if (current) {
      view.print(style.yellow("Stopping… (the conversation stays; Ctrl-C at the prompt twice to quit)"));
      input.cancelPending();
      current.abort();
      return;
    }
    const now = Date.now();
    if (now - lastInterrupt < 2000) {
      state.quit = true;
      input.close();
      return;
    }
    lastInterrupt = now;
    if (tty) {
      input.rl.write(null, { ctrl: true, name: "u" });
      out(style.dim("\n(Ctrl-C again to quit, or Ctrl-D)\n"));
      input.rl.prompt();
    }
  };
  input.rl.on("SIGINT", onInterrupt);
  process.on("SIGINT", onInterrupt);

  out(
    `${style.bold("hands")} ${style.dim(`· ${session.provider.model} · ${workspace} · approval ${state.mode} · /help for commands`)}\n`,
  );
  if (instructions) out(style.dim("Project instructions loaded (AGENTS.md).\n"));

  let first = args.task;
  let planFirst = args.plan;
  let exitCode = 0;
  try {
    while (!state.quit) {
      view.todos = todos;
      let text: string | null;
      if (first) {
        text = first;
        first = undefined;
        out(`${style.cyan("›")} ${text}\n`);
      } else {
        out(`${status()}\n`);
        text = await input.readRequest(`${style.cyan("›")} `, `${style.dim("…")} `);
      }
      if (text === null) break;
      const trimmed = text.trim();
      if (!trimmed) continue;
      if (trimmed.startsWith("/")) {
        await runSlashCommand(trimmed, state, runPlan);
        continue;
      }
      if (planFirst) {
        planFirst = false;
        await runPlan(trimmed);
        continue;
      }
      const r = await state.request(trimmed);
      if (r && r.status !== "done" && r.status !== "aborted") exitCode = 1;
    }
  } finally {
    process.off("SIGINT", onInterrupt);
    input.close();
    await session.close();
    view.breakLine();
  }
  if (state.writer)
    out(style.dim(`Session saved: ${state.writer.meta.id} (hands --resume ${state.writer.meta.id})\n`));
  return exitCode;

  /** Plan first (read-only), let the user accept, edit or cancel the checklist, then execute it. */
  async function runPlan(task: string): Promise<void> {
    view.print(style.dim("Planning (read-only: nothing will be changed)…"));
    const r = await state.request(planRequest(task), true);
    if (r?.status !== "done") return;
    const proposed = extractPlan(r.answer);
    if (proposed.length === 0) {
      view.print(style.yellow("The model gave no checklist; nothing to execute."));
      return;
    }
    const items = await reviewPlan(proposed, input, view);
    if (!items) return;
    todos = items.map((text) => ({ text, status: "pending" as const }));
    view.todos = todos;
    await state.request(planExecutionRequest(items));
  }
}
