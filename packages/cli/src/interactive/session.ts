// The interactive session: a prompt, requests that continue one conversation, approvals,
// slash commands, plans, checkpoints for /undo, and a session file saved as it goes.
import { join } from "node:path";
import {
  Agent,
  type AgentEvent,
  type ApprovalMode,
  builtinTools,
  connectMcpServers,
  createApprovalGate,
  createTodoTool,
  type McpConnection,
  newSessionId,
  openCheckpoints,
  parseMcpServers,
  projectInstructions,
  type RunResult,
  SessionStore,
  type SessionWriter,
  type TodoItem,
  type Tool,
  TraceWriter,
  type TurnCheckpoints,
} from "@hands/agent";
import type { Message, Provider, Usage } from "@hands/llm";
import { type CliArgs, UsageError } from "../args.js";
import { resolveSettings } from "../config.js";
import type { AgentMemory } from "../memory-run.js";
import { dataDir } from "../paths.js";
import { extractPlan, PLAN_INSTRUCTIONS, planExecutionRequest, planRequest } from "../plan.js";
import { COLOR, PLAIN } from "../render.js";
import { approvalMode, memoryHost, resolveProvider, resolveWorkspace } from "../run.js";
import { prepareSandbox } from "../sandbox-setup.js";
import { untrustedNotice } from "../trust.js";
import { trustFolder } from "../trust-store.js";
import { makeAsker } from "./approve.js";
import { auditListener, loadPolicy } from "./audit.js";
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
  const workspace = resolveWorkspace(args.cwd ?? process.cwd());
  const tty = Boolean(process.stdin.isTTY && process.stdout.isTTY);
  const useColor = args.color ?? (tty && !process.env.NO_COLOR);
  const style = useColor ? COLOR : PLAIN;
  const out = (text: string) => process.stdout.write(text);
  const resolveAll = () => {
    const s = resolveSettings(args, workspace, process.env, { approvalDefault: "ask" });
    const p = loadPolicy(workspace, s.trust.trusted);
    return { settings: s, policy: p.policy, ignored: [...s.ignored, ...p.ignored] };
  };
  let resolved = resolveAll();
  // In a terminal, a folder whose settings would be partly ignored asks once to be trusted.
  const { trust } = resolved.settings;
  if (tty && resolved.ignored.length && !trust.trusted && trust.why !== "store-unsafe") {
    if (await askTrust(workspace, resolved.ignored, style, out)) {
      trustFolder(workspace);
      out(style.dim(`Trusted ${workspace} (hands untrust to undo).\n`));
      resolved = resolveAll();
    }
  }
  const { settings, policy } = resolved;
  for (const line of untrustedNotice(workspace, settings.trust, resolved.ignored))
    out(style.yellow(`${line}\n`));
  const mode = approvalMode(args.approval ?? settings.approval ?? "ask");

  const found = await resolveProvider(settings, err, (t) => out(style.dim(`${t}\n`)));
  if (typeof found === "number") return found;
  let provider: Provider = found;
  const box = await prepareSandbox(
    {
      kind: settings.sandbox,
      workspace,
      network: args.network,
      allowDomain: args.allowDomain,
      e2bTemplate: settings.e2bTemplate,
    },
    err,
  );

  const data = dataDir();
  const store = new SessionStore(join(data, "sessions"));
  let history: Message[] = [];
  let writer: SessionWriter | undefined;
  const usage: Usage = { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, costUsd: 0 };
  const resumeId = args.resume ?? (args.continue ? store.latest(workspace)?.id : undefined);
  if (args.continue && !resumeId)
    out(style.dim("No earlier session in this workspace: starting a new one.\n"));
  if (resumeId) {
    let loaded: ReturnType<SessionStore["load"]>;
    try {
      loaded = store.load(resumeId);
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
    history = loaded.messages;
    Object.assign(usage, loaded.usage);
    writer = store.reopen(loaded.meta);
    out(
      style.dim(
        `Resumed session ${loaded.meta.id}: ${loaded.steps} steps, ${history.filter((m) => m.role === "user").length} requests.\n`,
      ),
    );
    const reply = lastReply(history);
    if (reply) out(style.dim(`Last reply: ${reply.slice(0, 300)}\n`));
  }

  const view = new SessionView(out, style, tty, () => process.stdout.columns);
  const input = new LineInput(tty, join(data, "history"));
  // The session's id is known before its file exists, so its checkpoints can be found on resume.
  const sessionId = writer?.meta.id ?? newSessionId();
  const checkpoints = await openCheckpoints({
    workspace,
    dir: join(data, "checkpoints"),
    sessionId,
    onWarning: (m) => view.print(style.yellow(`  ! ${m}`)),
  });
  const instructions = projectInstructions(workspace);
  const memory = settings.memory.enabled
    ? await (await import("../memory-run.js")).AgentMemory.open(
        memoryHost(settings, provider, data, (t) => view.print(style.yellow(t))),
        workspace,
        `chat-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`,
      )
    : undefined;

  // MCP servers from the project or user config; their tools join the built-in ones.
  let mcp: McpConnection | undefined;
  let servers: ReturnType<typeof parseMcpServers>;
  try {
    servers = parseMcpServers(settings.mcpServers);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (Object.keys(servers).length > 0) {
    // A server that stops, restarts or is given up on later says so, like a memory warning.
    mcp = await connectMcpServers(servers, { onNotice: (m) => view.print(style.yellow(`${m}\n`)) });
    for (const s of mcp.servers) out(style.dim(`MCP server ${s.name}: ${s.tools} tools\n`));
    for (const e of mcp.errors) out(style.yellow(`${e}\n`));
  }

  const status = (width?: number) => {
    // With memory, the context is what memory assembled, on the scale of its budget.
    if (memory) view.contextTokens = memory.contextTokens;
    const budget = memory ? memory.budget : settings.maxTokens;
    return view.statusLine({
      model: provider.model,
      workspace,
      sandbox: box.kind,
      approval: state.mode,
      usage,
      ...(budget ? { contextBudget: budget } : {}),
      ...(width ? { width } : {}),
    });
  };
  // While a request runs, the status line stays on the terminal's last row where that is safe.
  const bar = tty && StatusBar.supported(process.stdout) ? new StatusBar(process.stdout, status) : undefined;

  let todos: TodoItem[] = [];
  const todoTool = createTodoTool((items) => {
    todos = items;
  }) as Tool;
  const memoryTools = memory ? [memory.tool] : [];
  const tools = [...builtinTools(), todoTool, ...(mcp?.tools ?? []), ...memoryTools];
  const readOnlyTools = [...builtinTools().filter((t) => t.readOnly), ...memoryTools];

  let current: AbortController | undefined;
  const asker = makeAsker(input, view, box.kind);

  const state: SessionState = {
    args,
    workspace,
    provider,
    sandbox: box.kind,
    mode,
    history,
    usage,
    view,
    input,
    checkpoints,
    store,
    writer,
    memory,
    quit: false,
    out,
    async switchModel(name: string) {
      const p = await resolveProvider(settings, err, () => {}, name);
      if (typeof p === "number") throw new Error("no model server answered");
      provider = p;
      state.provider = p;
    },
    async request(text: string, plan = false) {
      state.writer ??= store.create({
        id: sessionId,
        workspace,
        provider: provider.name,
        model: provider.model,
      });
      const w = state.writer;
      const trace = new TraceWriter(join(data, "traces", `${w.meta.id}.jsonl`));
      const audit = auditListener(data, w.meta.id);
      // A plan request only reads; other requests get a checkpoint, taken while the model thinks.
      if (!plan) checkpoints.begin(text);
      const gate = createApprovalGate({
        workspace,
        policy,
        mode: () => state.mode,
        askUser: asker,
        beforeChange: (abs) => checkpoints.beforeChange(abs),
      });
      const agent = new Agent({
        provider,
        workspace,
        tools: plan ? readOnlyTools : tools,
        createSandbox: box.create,
        maxSteps: settings.maxSteps,
        ...(settings.maxTokens ? { maxTokens: settings.maxTokens } : {}),
        outputDir: join(data, "outputs"),
        runId: w.meta.id,
        instructions: [instructions, plan ? PLAN_INSTRUCTIONS : undefined].filter(Boolean).join("\n\n"),
        approve: gate,
        ...memory?.agentOptions(),
      });
      current = new AbortController();
      view.turnTokens = 0;
      bar?.start();
      try {
        const result = await agent.run(text, {
          signal: current.signal,
          history: state.history,
          onMessage: (m) => w.message(m),
          onEvent: (e: AgentEvent) => {
            view.onEvent(e);
            trace.write(e);
            audit(e);
            if (e.type === "model_response") {
              w.usage(e.usage);
              addInto(state.usage, e.usage);
            }
            if (e.type === "model_response" || e.type === "tool_end") bar?.draw();
          },
        });
        state.history = result.messages.filter((m) => m.role !== "system");
        w.turn(result.status, result.steps);
        // The answer is in: what memory learns from it is not part of the run, and a Ctrl-C
        // now is a Ctrl-C at the prompt, not a stop.
        current = undefined;
        await memory?.learn(text, result).catch(() => {});
        return result;
      } finally {
        if (!plan) await checkpoints.end();
        current = undefined;
        trace.close();
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
    `${style.bold("hands")} ${style.dim(`· ${provider.model} · ${workspace} · approval ${state.mode} · /help for commands`)}\n`,
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
    state.writer?.close();
    await mcp?.close();
    await box.close();
    await checkpoints.close();
    await memory?.close().catch(() => {});
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

function addInto(total: Usage, step: Usage): void {
  total.inputTokens += step.inputTokens;
  total.outputTokens += step.outputTokens;
  total.cachedInputTokens = (total.cachedInputTokens ?? 0) + (step.cachedInputTokens ?? 0);
  total.costUsd = (total.costUsd ?? 0) + (step.costUsd ?? 0);
}
