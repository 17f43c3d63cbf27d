// The interactive session: a prompt, requests that continue one conversation, approvals,
// slash commands, plans, checkpoints for /undo, and a session file saved as it goes.
import { realpathSync } from "node:fs";
import { resolve } from "node:path";
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
import { fetchModelList, type Message, type ModelList, type Provider, type Usage } from "@hands/llm";
import { type AgentMemory, dataDir, openSession } from "@hands/sdk/root";
import type { CliArgs } from "../args.js";
import { extractPlan, PLAN_INSTRUCTIONS, planExecutionRequest, planRequest } from "../plan.js";
import { COLOR, PLAIN } from "../render.js";
import { makeAsker } from "./approve.js";
import { runSlashCommand, SLASH_COMMANDS } from "./commands.js";
import type { Input, View } from "./front.js";
import { LineInput } from "./input.js";
import { reviewPlan } from "./plan-review.js";
import { lastReply } from "./session-notes.js";
import { askTrust } from "./trust-prompt.js";
import type { TuiFront } from "./tui/front.js";
import { SessionView } from "./ui.js";

export interface SessionState {
  args: CliArgs;
  workspace: string;
  provider: Provider;
  sandbox: string;
  mode: ApprovalMode;
  history: Message[];
  usage: Usage;
  view: View;
  input: Input;
  checkpoints: TurnCheckpoints;
  store: SessionStore;
  writer: SessionWriter | undefined;
  /** When memory is on: it assembles every request's context, across the conversation. */
  memory: AgentMemory | undefined;
  /** Switches the model (/model). */
  switchModel(name: string): Promise<void>;
  /** The models the endpoint lists, or why they cannot be listed (/model). */
  endpointModels(): Promise<ModelList>;
  /** Runs one request; `plan` makes it a planning request (read-only tools). */
  request(text: string, plan?: boolean): Promise<RunResult | undefined>;
  out(text: string): void;
  quit: boolean;
}

export async function runInteractive(args: CliArgs, err: (text: string) => void): Promise<number> {
  const tty = Boolean(process.stdin.isTTY && process.stdout.isTTY);
  const useColor = args.color ?? (tty && !process.env.NO_COLOR);
  const style = useColor ? COLOR : PLAIN;
  // In a terminal, everything goes through the terminal view once it is up. It starts before
  // the session has opened (model, sandbox, memory…): the prompt is editable at once, and a
  // request typed meanwhile waits for the session.
  let front: TuiFront | undefined;
  const out = (text: string) => (front ? front.print(text) : process.stdout.write(text));
  let statusText: ((width: number) => string) | undefined;
  if (tty)
    front = await startFront(args, style, useColor, (w) => statusText?.(w) ?? style.dim("── starting… ──"));
  // Memory and checkpoint warnings go through the view once there is one.
  let shown: { view: View; ask: ReturnType<typeof makeAsker> } | undefined;
  let todos: TodoItem[] = [];
  const opening = openSession({
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
    ...(front
      ? { confirmTrust: (ignored: string[], ws: string) => askTrustInView(front!, ws, ignored, style) }
      : tty
        ? { confirmTrust: (ignored: string[], ws: string) => askTrust(ws, ignored, style, out) }
        : {}),
    report: (level, text, topic) => {
      // (Not on stderr while the terminal view draws: it would land in the middle of its frame.)
      if (topic === "sandbox") front ? front.print(style.yellow(text)) : err(`${text}\n`);
      else if (topic === "memory" && shown) shown.view.print(style.yellow(text));
      else if (topic === "checkpoints" && shown) shown.view.print(style.yellow(`  ! ${text}`));
      else if (topic === "mcp" && level === "warning" && shown) shown.view.print(style.yellow(`${text}\n`));
      else out(level === "warning" ? style.yellow(`${text}\n`) : style.dim(`${text}\n`));
    },
  });
  let session: Awaited<typeof opening>;
  try {
    session = await opening;
  } catch (e) {
    // The error is printed after the terminal is given back.
    await front?.stop();
    throw e;
  }
  const { workspace, settings, store } = session;
  const sandbox = session.sandboxKind;
  const { memory, instructions } = session;
  const statusInfo = (width?: number) => {
    // With memory, the context is what memory assembled, on the scale of its budget.
    if (memory?.contextTokens) view.contextTokens = memory.contextTokens;
    const budget = memory ? memory.budget : settings.maxTokens;
    return {
      model: session.provider.model,
      workspace,
      sandbox,
      approval: session.mode,
      usage: session.usage,
      ...(budget ? { contextBudget: budget } : {}),
      ...(width ? { width } : {}),
    };
  };
  const status = (width?: number) => view.statusLine(statusInfo(width));

  let view: View;
  let input: Input;
  if (front) {
    statusText = (width) => status(width);
    view = front;
    input = front;
  } else {
    view = new SessionView(out, style, false);
    input = new LineInput(false);
  }
  shown = { view, ask: makeAsker(input, view, sandbox) };
  // A resumed session's status line shows its context as it was.
  if (session.resumed?.contextTokens) view.contextTokens = session.resumed.contextTokens;

  if (args.continue && !session.resumed)
    out(style.dim("No earlier session in this workspace: starting a new one.\n"));
  if (session.resumed) {
    const r = session.resumed;
    out(style.dim(`Resumed session ${r.id}: ${r.steps} steps, ${r.requests} requests.\n`));
    const reply = lastReply(session.history);
    if (reply) out(style.dim(`Last reply: ${reply.slice(0, 300)}\n`));
  }

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
    async endpointModels(): Promise<ModelList> {
      const { provider, baseUrl, apiKey } = session.settings;
      if (provider === "anthropic" || !baseUrl)
        return { ok: false, problem: "http", message: "this provider's models are not listed here" };
      return fetchModelList(baseUrl, apiKey ? { apiKey } : {});
    },
    async request(text: string, plan = false) {
      const controller = new AbortController();
      current = controller;
      view.turnTokens = 0;
      front?.beginRun(() => controller.abort());
      try {
        return await session.run(text, {
          signal: controller.signal,
          ...(plan ? { readOnly: true, instructions: PLAN_INSTRUCTIONS } : {}),
          onEvent: (e: AgentEvent) => view.onEvent(e),
        });
      } finally {
        current = undefined;
        view.breakLine();
        front?.endRun();
      }
    },
  };

  // Ctrl-C: stops the running step; at the prompt, twice quits. Ctrl-D quits. In a terminal the
  // view reads Ctrl-C and Esc as keys; a SIGINT sent from elsewhere stops the running step.
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
  };
  if (input instanceof LineInput) input.rl.on("SIGINT", onInterrupt);
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
        text = front ? front.takeRequest(first) : first;
        if (!front) out(`${style.cyan("›")} ${text}\n`);
        first = undefined;
      } else {
        if (!front) out(`${status()}\n`);
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
    const saved = state.writer
      ? style.dim(`Session saved: ${state.writer.meta.id} (hands --resume ${state.writer.meta.id})\n`)
      : "";
    if (front) {
      if (saved) front.print(saved);
      await front.stop();
      front = undefined;
    } else if (saved) out(saved);
  }
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

/** The terminal view, started (its code is loaded only here: a pipe never loads it). */
async function startFront(
  args: CliArgs,
  style: typeof COLOR,
  markdown: boolean,
  status: (width: number) => string,
): Promise<TuiFront> {
  const [{ TuiFront }, { PromptHistory }] = await Promise.all([
    import("./tui/front.js"),
    import("./tui/history.js"),
  ]);
  let workspace = resolve(args.cwd ?? process.cwd());
  try {
    workspace = realpathSync(workspace);
  } catch {
    // openSession reports a missing folder.
  }
  const front = new TuiFront({
    style,
    markdown,
    workspace,
    history: new PromptHistory(dataDir(process.env), workspace),
    commands: SLASH_COMMANDS,
    status,
    notifyAfterMs: Number(process.env.HANDS_NOTIFY_AFTER_MS ?? 10_000),
  });
  await front.start();
  return front;
}

/** The trust question (see trust-prompt.ts) asked in the terminal view: one key, y or n. */
async function askTrustInView(front: TuiFront, workspace: string, ignored: string[], style: typeof COLOR) {
  front.print(
    `${style.yellow("?")} ${style.bold(workspace)} is not a trusted folder. Its .hands/ settings include:\n` +
      ignored.map((i) => `    ${i}`).join("\n") +
      `\n${style.dim("  A repository you cloned, or a command run here, can write these files.")}`,
  );
  const k = await front.choose(`${style.yellow("Trust this folder and apply them?")} [y/N]`, [
    "y",
    "n",
    "\r",
  ]);
  return k === "y";
}
