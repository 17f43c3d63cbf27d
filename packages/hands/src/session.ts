// The composition root: the one place a Hands session is put together from settings —
// workspace trust, provider, sandbox, tools and MCP servers, memory, command policy and the
// approval gate, trace, audit log, project instructions, checkpoints and the session file.
// The one-shot CLI, the interactive CLI and the SDK are front ends over it: they turn their
// input into a SessionSetup and render what the session reports, nothing more.
import { join } from "node:path";
import {
  Agent,
  type AgentEvent,
  APPROVAL_MODES,
  type ApprovalMode,
  type ApprovalPrompt,
  type ApproveHook,
  builtinTools,
  type Child,
  type ChildRequest,
  CommandPolicy,
  connectMcpServers,
  createApprovalGate,
  createRouter,
  createTaskTool,
  createTodoTool,
  Diagnostics,
  databaseTools,
  type EditorAccess,
  findSqliteFiles,
  type HookOutcome,
  type Hooks,
  type McpConnection,
  type ModelRole,
  mergeHooks,
  newSessionId,
  openCheckpoints,
  parseDatabases,
  parseMcpServers,
  projectInstructions,
  RECALL_TOOL,
  type RunResult,
  runChild,
  runHooks,
  SessionStore,
  type SessionWriter,
  Slots,
  TASK_TOOL,
  type TodoItem,
  TokenBudget,
  type Tool,
  type ToolContext,
  TraceWriter,
  type TurnCheckpoints,
  type UserAnswer,
  webFetchTool,
} from "@hands/agent";
import type { Message, Provider, Usage } from "@hands/llm";
import type { SandboxKind } from "@hands/sandbox";
import type { AgentMemory } from "./agent-memory.js";
import { auditListener } from "./audit.js";
import { SettingsError } from "./errors.js";
import { firstRequestMap } from "./first-map.js";
import { commandHooks } from "./hook-commands.js";
import type { MemoryHost } from "./memory-open.js";
import { dataDir as defaultDataDir } from "./paths.js";
import { loadPolicy } from "./policy.js";
import { memoryHost, resolveProvider } from "./provider.js";
import { type PreparedSandbox, prepareSandbox } from "./sandbox-setup.js";
import { sandboxHasPython, usableTools, withheldTools } from "./session-tools.js";
import { resolveSettings, type Settings } from "./settings.js";
import type { SettingFlags } from "./settings-flags.js";
import { resolveSubagents, type SubagentConfig, type SubagentSettings } from "./subagents-config.js";
import { untrustedNotice } from "./trust.js";
import { realFolder, trustFolder } from "./trust-store.js";

/** What a message from the session is about, so a front end can place it. */
export type SessionTopic =
  | "trust"
  | "settings"
  | "model"
  | "sandbox"
  | "memory"
  | "mcp"
  | "checkpoints"
  | "hooks";

export interface SessionSetup {
  /** The workspace folder (its real path is used). */
  workspace: string;
  /** Settings given directly (the CLI's flags): they win over the environment and the config files. */
  flags?: SettingFlags;
  /** Where the HANDS_* / OPENAI_* / ANTHROPIC_* settings and the config folders are found. */
  env?: NodeJS.ProcessEnv;
  /** Config files read: both (the CLI), or none (only flags and the environment count). */
  configFiles?: boolean;
  /** The approval mode when no setting names one ("auto" for one task, "ask" for a session). */
  approvalDefault: ApprovalMode;
  /**
   * Asked when a call needs a person's yes (approval "ask", a policy "ask" rule, any write into
   * .hands/). Without it such calls are refused, with a reason the model reads.
   */
  askUser?: (prompt: ApprovalPrompt) => Promise<UserAnswer>;
  /** Asked once when some of an untrusted folder's settings would be ignored; true trusts the folder. */
  confirmTrust?: (ignored: string[], workspace: string) => Promise<boolean>;
  /** What the person should know while the session is set up or runs (never an error). */
  report?: (level: "info" | "warning", text: string, topic: SessionTopic) => void;
  /** Keep the conversation in a session file (resumable); default true. */
  save?: boolean;
  /** Resume this saved session, or "latest": the newest in this workspace (none: a new one). */
  resume?: string;
  /** The id of a new session (default: a new session id). */
  id?: string;
  /** The JSONL trace file (default: <data>/traces/<id>.jsonl). */
  tracePath?: string;
  /** A checkpoint before each request's first change (for undo). */
  checkpoints?: boolean;
  /** Adds the todo tool; called with its list whenever the model updates it. */
  onTodos?: (items: TodoItem[]) => void;
  /** Memory scope of this session's conversation (default: a new one). */
  memoryScope?: string;
  /** Data folder (sessions, traces, memory, audit log); default HANDS_DATA_DIR or the XDG one. */
  dataDir?: string;
  /** Added to the project instructions (AGENTS.md) for every request. */
  instructions?: string;
  /** "builtin" (default): the built-in denials and "ask" rules, then the policy files; "none": no command rules. */
  commandPolicy?: "builtin" | "none";
  /** The caller's own tools (the SDK's defineTool): offered beside the built-in ones; a clash of names is an error. */
  tools?: Tool[];
  /** Hook functions (the SDK's): they run after the config files' hook commands. */
  hooks?: Hooks;
  /** Offer the task tool (sub-agents): true, or how many run at once and their step limit. */
  subagents?: boolean | Omit<SubagentConfig, "enabled">;
  /**
   * The editor driving the session (ACP): the file tools read (and write) workspace files
   * through its buffers, and run_command may run in its terminal. Confinement and approvals
   * apply first, as always.
   */
  editor?: EditorAccess;
}

export interface SessionRunOptions {
  signal?: AbortSignal;
  /** Every event of the run, in order (the same events the trace and --json get). */
  onEvent?: (event: AgentEvent) => void;
  /** A planning request: read-only tools only. */
  readOnly?: boolean;
  /** Added to the project instructions for this request. */
  instructions?: string;
  /** Tools for this request only. */
  extraTools?: Tool[];
  /** A token budget for this request instead of the session's. */
  maxTokens?: number;
  /** The role of this request's model (model routing): "planner" for a planning request. */
  role?: "planner";
  /**
   * What workspace memory keeps of this request (its outcome, as a long-term fact): the task
   * as given (default), or nothing (false) — for requests that are not the user's own task,
   * such as a retry prompt, whose caller records the real task with `learn` once it ends.
   */
  learn?: false;
}

/** A resumed session: what it held. */
export interface ResumedSession {
  id: string;
  steps: number;
  requests: number;
  /** Input tokens of its last model call (how full the context is). */
  contextTokens?: number;
}

/** What openSession puts together. */
interface SessionParts {
  setup: SessionSetup;
  id: string;
  workspace: string;
  settings: Settings;
  policy: CommandPolicy;
  provider: Provider;
  box: PreparedSandbox;
  dataDir: string;
  store: SessionStore;
  instructions: string | undefined;
  tools: Tool[];
  readOnlyTools: Tool[];
  /** Whether the sandbox's commands find python3 (execute_python is offered only then). */
  python: boolean;
  /** What web_fetch and query_database can reach (each is offered only then). */
  reach: { web: boolean; databases: boolean };
  /** Stops what the database tools started. */
  closeReach: () => void;
  checkpoints: TurnCheckpoints | undefined;
  memory: AgentMemory | undefined;
  mcp: McpConnection | undefined;
  hooks: Hooks;
  /** The providers of the roles the settings name a model for. */
  roles: Map<ModelRole, Provider>;
}

export class HandsSession {
  /** The approval mode; a front end may change it between requests (/approval). */
  mode: ApprovalMode;
  provider: Provider;
  /** The conversation so far (no system message). */
  history: Message[] = [];
  readonly usage: Usage = { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, costUsd: 0 };
  writer: SessionWriter | undefined;
  resumed: ResumedSession | undefined;
  private trace: TraceWriter | undefined;
  private readonly audit: (e: AgentEvent) => void;
  private closed = false;
  /** The repository map the session's first request carried ("" for none), kept for the later ones. */
  /** The settings last written to the session file. */
  recorded: { provider: string; model: string; approval: string } | undefined;

  readonly setup: SessionSetup;
  readonly id: string;
  readonly workspace: string;
  readonly settings: Settings;
  readonly policy: CommandPolicy;
  readonly dataDir: string;
  readonly store: SessionStore;
  readonly instructions: string | undefined;
  readonly tools: Tool[];
  readonly readOnlyTools: Tool[];
  private readonly python: boolean;
  private readonly reach: { web: boolean; databases: boolean };
  private readonly closeReach: () => void;
  readonly checkpoints: TurnCheckpoints | undefined;
  readonly memory: AgentMemory | undefined;
  readonly mcp: McpConnection | undefined;
  /** The config's hook commands and the caller's hook functions. */
  readonly hooks: Hooks;
  private readonly roles: Map<ModelRole, Provider>;
  private readonly box: PreparedSandbox;
  /** Language servers for write_file/edit_file's new errors (off: --no-diagnostics). */
  private readonly diagnostics: Diagnostics | undefined;

  /** Use openSession. */
  constructor(parts: SessionParts) {
    this.setup = parts.setup;
    this.id = parts.id;
    this.workspace = parts.workspace;
    this.settings = parts.settings;
    this.policy = parts.policy;
    this.provider = parts.provider;
    this.box = parts.box;
    this.dataDir = parts.dataDir;
    this.store = parts.store;
    this.instructions = parts.instructions;
    this.tools = parts.tools;
    this.readOnlyTools = parts.readOnlyTools;
    this.python = parts.python;
    this.reach = parts.reach;
    this.closeReach = parts.closeReach;
    this.checkpoints = parts.checkpoints;
    this.memory = parts.memory;
    this.mcp = parts.mcp;
    this.hooks = parts.hooks;
    this.roles = parts.roles;
    this.mode = parts.settings.approval;
    this.audit = auditListener(parts.dataDir, parts.id);
    const d = parts.settings.diagnostics;
    // The servers get a sandbox of their own (same backend and settings), made on the first
    // edit of a file they read; each request's commands get theirs from the same manager.
    let box: ReturnType<PreparedSandbox["create"]> | undefined;
    this.diagnostics = d.enabled
      ? new Diagnostics({
          sandbox: () => {
            box ??= this.box.create();
            return box;
          },
          kind: () => this.box.kind,
          ...(d.waitMs ? { waitMs: d.waitMs } : {}),
          ...(d.startWaitMs ? { startWaitMs: d.startWaitMs } : {}),
          ...(d.maxErrors ? { maxErrors: d.maxErrors } : {}),
        })
      : undefined;
  }

  /** The sandbox backend commands run in ("auto" is resolved on first read: it probes bubblewrap). */
  get sandboxKind(): SandboxKind {
    return this.box.kind;
  }

  /** Whether commands run isolated from the machine (false only for the local backend). */
  get isolated(): boolean {
    return this.box.kind !== "local";
  }

  /** Switches the model (same endpoint and settings). */
  async setModel(name: string): Promise<void> {
    this.provider = await resolveProvider(this.settings, () => {}, name);
  }

  /** Writes an event to the session's trace (events a front end adds, e.g. a plan). */
  record(event: AgentEvent): void {
    this.openTrace().write(event);
  }

  /** Runs one request of the conversation to its end; the history carries on to the next. */
  async run(task: string, options: SessionRunOptions = {}): Promise<RunResult> {
    if (this.closed) throw new Error("the session is closed");
    if (this.setup.save !== false)
      this.writer ??= this.store.create({
        id: this.id,
        workspace: this.workspace,
        provider: this.provider.name,
        model: this.provider.model,
      });
    const writer = this.writer;
    // The model and approval mode in force, recorded when they change: a resume restores them.
    const now = { provider: this.provider.name, model: this.provider.model, approval: this.mode };
    if (writer && JSON.stringify(now) !== JSON.stringify(this.recorded)) {
      writer.append({ type: "settings", time: Date.now(), ...now });
      this.recorded = now;
    }
    const trace = this.openTrace();
    const checkpoints = options.readOnly ? undefined : this.checkpoints;
    checkpoints?.begin(task);
    const maxTokens = options.maxTokens ?? this.settings.maxTokens;
    // A memory deferred until the first request has left is opened while the model answers.
    const memory = this.memory;
    // Only the tools this request can use are sent (session-tools.ts): in mode read-only the
    // gate refuses every other one, and execute_python needs python3 in the sandbox.
    const candidates = options.readOnly ? this.readOnlyTools : [...this.tools, ...(options.extraTools ?? [])];
    // The map orients the conversation's first task (first-map.ts); a resumed conversation, or a
    // later task of this one, already knows its way around.
    const orientation =
      this.history.length === 0
        ? await firstRequestMap(
            this.workspace,
            this.dataDir,
            task,
            this.settings.repoMapTokens,
            options.signal,
          )
        : undefined;
    const conditions = { approval: this.mode, python: this.python, ...this.reach };
    const approve = createApprovalGate({
      workspace: this.workspace,
      policy: this.policy,
      mode: () => this.mode,
      ...(this.setup.askUser ? { askUser: this.setup.askUser } : {}),
      ...(checkpoints ? { beforeChange: (abs?: string) => checkpoints.beforeChange(abs) } : {}),
    });
    const sub = this.subagentSettings();
    if (sub && !candidates.some((t) => t.name === TASK_TOOL))
      candidates.push(
        createTaskTool({
          child: (req) => this.child(req, candidates, approve),
          maxConcurrent: sub.maxConcurrent,
          maxSteps: sub.maxSteps,
        }),
      );
    const base = options.role ? this.providerFor(options.role) : this.provider;
    const route = options.role ? undefined : this.router();
    const agent = new Agent({
      provider: memory ? memory.provider(base) : base,
      ...(route ? { route } : {}),
      workspace: this.workspace,
      tools: usableTools(candidates, conditions),
      withheldTools: withheldTools(candidates, conditions),
      createSandbox: this.box.create,
      diagnose: this.box.diagnose,
      maxSteps: this.settings.maxSteps,
      ...(maxTokens ? { maxTokens } : {}),
      outputDir: join(this.dataDir, "outputs"),
      runId: this.id,
      ...instructionsOption([this.instructions, options.instructions]),
      ...(orientation ? { orientation } : {}),
      approve,
      ...this.memory?.agentOptions(),
      hooks: this.hooks,
      ...(this.setup.editor ? { editor: this.setup.editor } : {}),
      ...(this.diagnostics && !options.readOnly ? { diagnostics: this.diagnostics } : {}),
    });
    try {
      const result = await agent.run(task, {
        ...(options.signal ? { signal: options.signal } : {}),
        history: this.history,
        ...(writer ? { onMessage: (m: Message) => writer.message(m) } : {}),
        onEvent: (e: AgentEvent) => {
          trace.write(e);
          this.audit(e);
          if (e.type === "model_response" || e.type === "subagent_end") {
            writer?.usage(e.usage);
            addInto(this.usage, e.usage);
          }
          options.onEvent?.(e);
        },
      });
      this.history = result.messages.filter((m) => m.role !== "system");
      writer?.turn(result.status, result.steps);
      // What the workspace taught this request: never a reason for the request to fail.
      if (options.learn !== false) await this.learn(task, result);
      return result;
    } finally {
      if (checkpoints) await checkpoints.end();
    }
  }

  /** The sub-agent settings in force: the config files', then the flag's or SDK's (undefined: no task tool). */
  private subagentSettings(): SubagentSettings | undefined {
    const s = this.setup.subagents;
    const given: SubagentConfig =
      s === undefined ? {} : typeof s === "object" ? { enabled: true, ...s } : { enabled: s };
    return resolveSubagents(this.settings.subagents, given);
  }

  /**
   * A child agent for one task: a fresh context with the project's instructions, the parent's
   * usable tools (only the read-only ones for explorers; never task or todo), the same approvals
   * and hooks, a sandbox of its own, and its own trace beside the session's.
   */
  private async child(req: ChildRequest, parentTools: readonly Tool[], approve: ApproveHook): Promise<Child> {
    const conditions = { approval: this.mode, python: this.python, ...this.reach };
    // The config's bounds: "tools": "read-only" keeps every child an explorer.
    const bounds = this.subagentSettings();
    // With memory on, the child gets a memory scope of its own: its chunks never enter the
    // parent's (or a sibling's) recall, and its recall tool answers from its own scope.
    const memory = this.memory ? await this.memory.child(req.runId) : undefined;
    const pool = parentTools.filter(
      (t) =>
        t.name !== TASK_TOOL &&
        t.name !== "todo" &&
        !(memory && t.name === RECALL_TOOL) &&
        ((req.tools === "all" && bounds?.tools !== "read-only") || t.readOnly),
    );
    if (memory) pool.push(memory.tool);
    const tracePath = join(this.dataDir, "traces", `${this.writer?.meta.id ?? this.id}.${req.runId}.jsonl`);
    const trace = new TraceWriter(tracePath);
    const provider = this.providerFor("subagent");
    const agent = new Agent({
      provider,
      workspace: this.workspace,
      tools: usableTools(pool, conditions),
      withheldTools: withheldTools(pool, conditions),
      createSandbox: this.box.create,
      diagnose: this.box.diagnose,
      maxSteps: req.maxSteps,
      ...(req.parentBudget ? { parentBudget: req.parentBudget } : {}),
      ...(bounds?.maxTokens ? { maxTokens: bounds.maxTokens } : {}),
      outputDir: join(this.dataDir, "outputs"),
      runId: req.runId,
      ...instructionsOption([
        this.instructions,
        "You are a sub-agent: another agent gave you this task. Do it, then reply with a short, complete report; it is all the other agent will see.",
      ]),
      approve,
      ...memory?.agentOptions(),
      hooks: this.hooks,
      ...(this.setup.editor ? { editor: this.setup.editor } : {}),
      ...(this.diagnostics ? { diagnostics: this.diagnostics } : {}),
    });
    return {
      agent,
      tracePath,
      model: provider.model,
      ...(memory ? { memoryScope: memory.scope } : {}),
      onEvent: (e) => {
        trace.write(e);
        this.audit(e);
      },
      close: async () => {
        trace.close();
        await memory?.close();
      },
    };
  }

  /** The provider of a role (model routing); the session's own unless one is configured. */
  providerFor(role: ModelRole): Provider {
    return this.roles.get(role) ?? this.provider;
  }

  /** The per-step router when an executor, chat or strong model is configured (else one model for all). */
  private router(): ReturnType<typeof createRouter> | undefined {
    if (!this.roles.has("executor") && !this.roles.has("chat") && !this.roles.has("strong")) return undefined;
    const chat = this.roles.get("chat");
    const strong = this.roles.get("strong");
    const after = this.settings.models.escalateAfter;
    return createRouter({
      executor: this.providerFor("executor"),
      ...(chat ? { chat } : {}),
      ...(strong ? { strong } : {}),
      ...(after ? { escalateAfter: after } : {}),
    });
  }

  /**
   * Runs independent tasks as sub-agents, at most `maxConcurrent` at once (--plan's independent
   * items): each a fresh child with all usable tools, their tokens within `maxTokens` together.
   * Their events (subagent_start/end) go to the session's trace and `onEvent`; results in order.
   */
  async runSubagents(
    prompts: string[],
    options: {
      signal?: AbortSignal;
      onEvent?: (e: AgentEvent) => void;
      maxTokens?: number;
      maxConcurrent?: number;
    },
  ): Promise<{ prompt: string; output: string; isError: boolean; usage?: Usage }[]> {
    const trace = this.openTrace();
    const approve = createApprovalGate({
      workspace: this.workspace,
      policy: this.policy,
      mode: () => this.mode,
      ...(this.setup.askUser ? { askUser: this.setup.askUser } : {}),
    });
    const budget = new TokenBudget(options.maxTokens);
    const slots = new Slots(options.maxConcurrent ?? this.subagentSettings()?.maxConcurrent ?? 4);
    const signal = options.signal ?? new AbortController().signal;
    const emit: NonNullable<ToolContext["emit"]> = (e) => {
      const event = { ...e, time: Date.now() } as AgentEvent;
      trace.write(event);
      if (event.type === "subagent_end") addInto(this.usage, event.usage);
      options.onEvent?.(event);
    };
    return Promise.all(
      prompts.map(async (prompt, i) => {
        const r = await runChild(
          { child: (req) => this.child(req, this.tools, approve), maxSteps: this.settings.maxSteps },
          slots,
          { prompt, tools: "all" },
          { signal, budget, emit, callId: `plan-item-${i + 1}`, step: 0 },
        );
        return {
          prompt,
          output: r.output,
          isError: r.isError ?? false,
          ...(r.usage ? { usage: r.usage } : {}),
        };
      }),
    );
  }

  /** Keeps what a finished task taught the workspace (see SessionRunOptions.learn). */
  async learn(task: string, result: RunResult): Promise<void> {
    await this.memory?.learn(task, result).catch(() => {});
  }

  /** Stops the MCP servers and the sandbox, saves memory, closes the files. Safe to call twice. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await sessionHook(this.hooks, "sessionEnd", this.id, this.workspace, this.setup.report);
    this.writer?.close();
    this.trace?.close();
    await this.mcp?.close().catch(() => {});
    this.closeReach();
    await this.diagnostics?.close().catch(() => {});
    await this.box.close();
    await this.checkpoints?.close();
    await this.memory?.close().catch(() => {});
  }

  private openTrace(): TraceWriter {
    this.trace ??= new TraceWriter(
      this.setup.tracePath ?? join(this.dataDir, "traces", `${this.writer?.meta.id ?? this.id}.jsonl`),
    );
    return this.trace;
  }
}

/** Builds a session from its setup; everything opened is closed again if a later part fails. */
export async function openSession(setup: SessionSetup): Promise<HandsSession> {
  const env = setup.env ?? process.env;
  const report = setup.report ?? (() => {});
  const workspace = realFolder(setup.workspace, "workspace folder");
  const data = setup.dataDir ?? defaultDataDir(env);
  const resolveAll = async () => {
    const settings = resolveSettings(setup.flags ?? {}, workspace, env, {
      approvalDefault: setup.approvalDefault,
      ...(setup.configFiles === false ? { configFiles: false } : {}),
    });
    if (setup.commandPolicy === "none")
      return { settings, policy: new CommandPolicy([]), ignored: settings.ignored };
    const p = await loadPolicy(workspace, settings.trust.trusted, env, setup.configFiles !== false);
    return { settings, policy: p.policy, ignored: [...settings.ignored, ...p.ignored] };
  };
  let resolved = await resolveAll();
  const { trust } = resolved.settings;
  if (setup.confirmTrust && resolved.ignored.length && !trust.trusted && trust.why !== "store-unsafe") {
    if (await setup.confirmTrust(resolved.ignored, workspace)) {
      trustFolder(workspace, env);
      report("info", `Trusted ${workspace} (hands untrust to undo).`, "trust");
      resolved = await resolveAll();
    }
  }
  const { settings, policy } = resolved;
  for (const line of untrustedNotice(workspace, settings.trust, resolved.ignored))
    report("warning", line, "trust");
  for (const line of settings.warnings) report("warning", `hands: warning: ${line}`, "settings");

  // A resumed session goes on with its own model and approval mode unless a flag says otherwise.
  const store = new SessionStore(join(data, "sessions"));
  const loaded = resumeFrom(store, setup.resume, workspace);
  const saved = loaded?.settings;
  const sameProvider = !saved?.provider || saved.provider === settings.provider;
  if (saved?.provider && !sameProvider && !setup.flags?.model)
    report(
      "warning",
      `The resumed session used ${saved.provider}; going on with ${settings.provider}.`,
      "model",
    );
  const provider = await resolveProvider(
    settings,
    (t) => report("info", t, "model"),
    !setup.flags?.model && sameProvider ? saved?.model : undefined,
  );
  // The SDK's chunk is read while the sandbox, memory and MCP set-up below run.
  provider.prepare?.();
  // One provider per role the settings name a model for (the same endpoint and key).
  const roles = new Map<ModelRole, Provider>();
  for (const [role, name] of Object.entries(settings.models))
    if (role !== "escalateAfter" && typeof name === "string")
      roles.set(
        role as ModelRole,
        name === provider.model ? provider : await resolveProvider(settings, () => {}, name),
      );
  const box = await prepareSandbox(
    {
      kind: settings.sandbox,
      workspace,
      network: settings.network,
      allowDomain: settings.allowDomain,
      e2bTemplate: settings.e2bTemplate,
      template: settings.template,
      env,
    },
    (t) => report("warning", t.trimEnd(), "sandbox"),
  );
  const opened: { close(): Promise<void> | void }[] = [box];
  try {
    const id = loaded?.meta.id ?? setup.id ?? newSessionId();
    const checkpoints = setup.checkpoints
      ? await openCheckpoints({
          workspace,
          dir: join(data, "checkpoints"),
          sessionId: id,
          onWarning: (m) => report("warning", m, "checkpoints"),
        })
      : undefined;
    if (checkpoints) opened.push(checkpoints);
    const instructions =
      [projectInstructions(workspace), setup.instructions].filter(Boolean).join("\n\n") || undefined;
    const memory = settings.memory.enabled
      ? await openSessionMemory(
          memoryHost(summarizerSettings(settings), provider, data, (t) => report("warning", t, "memory")),
          workspace,
          setup.memoryScope ?? `chat-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`,
        )
      : undefined;
    if (memory) opened.push(memory);
    const mcp = await connectMcp(settings, (level, t) => report(level, t, "mcp"));
    if (mcp) opened.push(mcp);

    const memoryTools = memory ? [memory.tool] : [];
    const todo = setup.onTodos ? [createTodoTool(setup.onTodos) as Tool] : [];
    const reach = reachTools(settings, workspace);
    opened.push(reach);
    const own = setup.tools ?? [];
    const tools = [...builtinTools(), ...reach.tools, ...todo, ...(mcp?.tools ?? []), ...memoryTools];
    refuseClashes(own, tools);
    tools.push(...own);
    const hooks = mergeHooks(commandHooks(settings.hooks, workspace, env), setup.hooks);
    // sessionStart may add to the instructions (e.g. the state of a ticket); a failure is reported.
    const started = await sessionHook(hooks, "sessionStart", id, workspace, report);
    const allInstructions = [instructions, ...started].filter(Boolean).join("\n\n") || undefined;
    const readOnlyTools = [
      ...builtinTools().filter((t) => t.readOnly),
      ...reach.tools.filter((t) => t.readOnly),
      ...own.filter((t) => t.readOnly),
      ...memoryTools,
    ];
    const session = new HandsSession({
      setup,
      id,
      workspace,
      settings,
      policy,
      provider,
      box,
      dataDir: data,
      store,
      instructions: allInstructions,
      tools,
      readOnlyTools,
      python: sandboxHasPython(settings.sandbox),
      reach: reach.can,
      closeReach: reach.close,
      checkpoints,
      memory,
      mcp,
      hooks,
      roles,
    });
    if (loaded) {
      session.history = loaded.messages;
      Object.assign(session.usage, loaded.usage);
      session.writer = store.reopen(loaded.meta);
      session.resumed = {
        id: loaded.meta.id,
        steps: loaded.steps,
        requests: loaded.messages.filter((m) => m.role === "user").length,
        ...(loaded.lastUsage ? { contextTokens: loaded.lastUsage.inputTokens } : {}),
      };
      const mode = loaded.settings.approval;
      if (!setup.flags?.approval && mode && (APPROVAL_MODES as readonly string[]).includes(mode))
        session.mode = mode as ApprovalMode;
      if (loaded.settings.model)
        session.recorded = {
          provider: loaded.settings.provider ?? session.provider.name,
          model: loaded.settings.model,
          approval: loaded.settings.approval ?? session.mode,
        };
    }
    return session;
  } catch (err) {
    for (const o of opened.reverse()) await Promise.resolve(o.close()).catch(() => {});
    throw err;
  }
}

/**
 * web_fetch (under the --allow-domain rules, which prepareSandbox has checked) and the
 * database tools (the settings' databases; SQLite files of the workspace), with whether each
 * has anything to reach: a tool that has not is withheld from the requests (session-tools.ts).
 */
function reachTools(
  settings: Settings,
  workspace: string,
): { tools: Tool[]; can: { web: boolean; databases: boolean }; close(): void } {
  const allow = settings.allowDomain ?? [];
  let databases: ReturnType<typeof parseDatabases>;
  try {
    databases = parseDatabases(settings.databases);
  } catch (e) {
    throw new SettingsError((e as Error).message);
  }
  const sqliteFiles = findSqliteFiles(workspace);
  const db = databaseTools({ databases, sqliteFiles });
  return {
    tools: [webFetchTool({ allow }), ...db.tools],
    close: db.close,
    can: { web: allow.length > 0, databases: databases.length > 0 || sqliteFiles.length > 0 },
  };
}

/**
 * The session's memory: opened now when its file exists (what earlier tasks taught the workspace
 * goes into the first request), else deferred until that request has left (see AgentMemory.deferred).
 */
async function openSessionMemory(host: MemoryHost, workspace: string, scope: string): Promise<AgentMemory> {
  const { AgentMemory } = await import("./agent-memory.js");
  return AgentMemory.deferred(host, workspace, scope) ?? AgentMemory.open(host, workspace, scope);
}

function resumeFrom(
  store: SessionStore,
  resume: string | undefined,
  workspace: string,
): ReturnType<SessionStore["load"]> | undefined {
  const id = resume === "latest" ? store.latest(workspace)?.id : resume;
  if (!id) return undefined;
  try {
    return store.load(id);
  } catch (e) {
    throw new SettingsError((e as Error).message);
  }
}

/** The MCP servers of the config (project when trusted, else the user's); undefined: none. */
async function connectMcp(
  settings: Settings,
  report: (level: "info" | "warning", text: string) => void,
): Promise<McpConnection | undefined> {
  let servers: ReturnType<typeof parseMcpServers>;
  try {
    servers = parseMcpServers(settings.mcpServers);
  } catch (e) {
    throw new SettingsError((e as Error).message);
  }
  if (Object.keys(servers).length === 0) return undefined;
  // A server that stops, restarts or is given up on later says so, like a memory warning.
  const mcp = await connectMcpServers(servers, { onNotice: (m) => report("warning", m) });
  for (const s of mcp.servers) report("info", `MCP server ${s.name}: ${s.tools} tools`);
  for (const e of mcp.errors) report("warning", e);
  return mcp;
}

function instructionsOption(parts: (string | undefined)[]): { instructions?: string } {
  const text = parts.filter(Boolean).join("\n\n");
  return text ? { instructions: text } : {};
}

function addInto(total: Usage, step: Usage): void {
  total.inputTokens += step.inputTokens;
  total.outputTokens += step.outputTokens;
  total.cachedInputTokens = (total.cachedInputTokens ?? 0) + (step.cachedInputTokens ?? 0);
  total.costUsd = (total.costUsd ?? 0) + (step.costUsd ?? 0);
}

/** The caller's tools may not take a name the session already uses (the model could not tell them apart). */
function refuseClashes(own: readonly Tool[], session: readonly Tool[]): void {
  const taken = new Set(session.map((t) => t.name));
  const seen = new Set<string>();
  for (const t of own) {
    if (taken.has(t.name))
      throw new SettingsError(
        `tool "${t.name}" has the name of a tool Hands already has (${[...taken].join(", ")}); choose another name`,
      );
    if (seen.has(t.name)) throw new SettingsError(`two tools are named "${t.name}"`);
    seen.add(t.name);
  }
}

/** Runs the session's start or end hooks; what they add (sessionStart's addContext), in order. */
async function sessionHook(
  hooks: Hooks,
  event: "sessionStart" | "sessionEnd",
  sessionId: string,
  workspace: string,
  report: SessionSetup["report"],
): Promise<string[]> {
  if (!hooks[event]?.length) return [];
  const tell = (o: HookOutcome) =>
    report?.(
      "warning",
      `hands: warning: the ${event} hook ${JSON.stringify(o.hook)} failed: ${o.message ?? o.outcome}`,
      "hooks",
    );
  const ran = await runHooks(hooks, event, { sessionId, workspace }, new AbortController().signal, tell);
  return ran.flatMap(({ answer }) =>
    event === "sessionStart" && answer.addContext ? [answer.addContext] : [],
  );
}

/**
 * A summarizer role means model summaries by that model (memory's own setting wins when it
 * names a model); the context budget still follows the session's model.
 */
function summarizerSettings(settings: Settings): Settings {
  const name = settings.models.summarizer;
  const s = settings.memory.summaries;
  if (!name || (s.kind === "model" && s.model)) return settings;
  return { ...settings, memory: { ...settings.memory, summaries: { kind: "model", model: name } } };
}
