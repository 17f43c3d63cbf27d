// Hands as a library: start or resume a session, run tasks in it, read its events as they
// happen, stop it, answer its approval questions, and get a structured answer. The same
// composition root as the `hands` command builds it, with safe defaults: the built-in command
// policy and an isolating sandbox unless the caller opts out by name.
import {
  type AgentEvent,
  type ApprovalMode,
  type ApprovalPrompt,
  defineTool,
  type HookEventName,
  type HookFunction,
  hooksFromFunctions,
  isDefinedTool,
  type RunStatus,
  type Tool,
  type ToolDefinition,
  type UserAnswer,
} from "@hands/agent";
import type { Usage } from "@hands/llm";
import { defaultSandboxKind, type SandboxKind } from "@hands/sandbox/base";
import { SettingsError } from "./errors.js";
import { dataDir } from "./paths.js";
import { secureDataDir } from "./private-data.js";
import { checkOptions } from "./sdk-options.js";
import { compileOutputSchema, type JsonSchema, outputInstructions, parseOutput } from "./sdk-output.js";
import { type HandsSession, openSession } from "./session.js";
import type { SettingFlags } from "./settings-flags.js";
import { checkSetting, SETTING_KEYS, SETTINGS, type SettingSpec } from "./settings-schema.js";
import { parseSubagentsConfig, type SubagentConfig } from "./subagents-config.js";

/** What a call that needs approval asks; answer true / false, or { answer, reason }. */
export type ApprovalRequest = ApprovalPrompt;
export type ApprovalAnswer = boolean | UserAnswer;

export interface SessionOptions {
  /** The folder the agent works in (default: the current directory). */
  workspace?: string;
  /** "openai" (any OpenAI-compatible endpoint; default), "anthropic", or "react" (text protocol). */
  provider?: "openai" | "anthropic" | "react";
  model?: string;
  /** The endpoint, e.g. http://127.0.0.1:11434/v1 (default: OPENAI_BASE_URL / ANTHROPIC_BASE_URL, else the provider's). */
  baseURL?: string;
  /** Default: OPENAI_API_KEY / ANTHROPIC_API_KEY. */
  apiKey?: string;
  /** off | low | medium | high: how hard a reasoning model thinks. */
  reasoning?: "off" | "low" | "medium" | "high";
  /** Step limit per run (default 50). */
  maxSteps?: number;
  /** Token budget per run (input + output). */
  maxTokens?: number;
  /** Seconds without data from the model before a call is retried (default 120). */
  idleTimeout?: number;
  /** "off": no repository map in the first request (default "on"). */
  repoMap?: "on" | "off";
  /** Size of the first request's repository map in tokens (default 512). */
  repoMapTokens?: number;
  /**
   * Where commands run. Default: an isolating backend (bubblewrap), or an error if there is
   * none. "local" runs commands as you, on your files and network: say so explicitly.
   */
  sandbox?: "bwrap" | "docker" | "local" | "e2b";
  /** Network of sandboxed commands: "none" (default) or "host". */
  network?: "none" | "host";
  /** Only these domains (through a filtering proxy); also what web_fetch may reach. */
  allowDomains?: string[];
  /** query_database's databases by name: a postgres:// URL, an SQLite path, or { url | path, writes }. */
  databases?: Record<string, string | { url?: string; path?: string; writes?: boolean }>;
  /**
   * "auto": writes and commands run unless the policy refuses or asks; "ask": every write and
   * command goes to `approve`; "read-only": none run. Default: "ask" with `approve`, else "auto".
   */
  approval?: ApprovalMode;
  /**
   * Called when a call needs a yes: approval "ask", a policy "ask" rule (e.g. `git push`), a write
   * into .hands/. Without it those calls are refused with a reason the model reads.
   */
  approve?: (request: ApprovalRequest) => ApprovalAnswer | Promise<ApprovalAnswer>;
  /** "builtin" (default): the built-in command policy (denials such as `rm -rf /`, asks such as `git push`); "none": no rules. */
  commandPolicy?: "builtin" | "none";
  /** Memory (AdaMEM) assembles each step's context: true (default), false, or a token budget. */
  memory?: boolean | { contextBudget?: number };
  /** MCP servers whose tools the agent may use, by name: { command, args?, env?, cwd?, timeoutMs? } or { url, headers? }. */
  mcpServers?: Record<string, McpServer>;
  /**
   * Your own tools (defineTool({ name, description, parameters, execute })): checked like the
   * built-in ones — arguments validated, a throw an error result, approvals unless readOnly.
   * A name Hands already uses is an error.
   */
  tools?: (Tool | ToolDefinition<any>)[];
  /**
   * Functions called at fixed points: preToolUse (answer { deny: reason } or { args }),
   * postToolUse ({ addContext }), sessionStart ({ addContext }), sessionEnd, stop ({ continue }).
   * They run after the config files' hook commands; one that throws or times out is reported, not fatal.
   */
  hooks?: { [E in HookEventName]?: HookFunction<E> | HookFunction<E>[] };
  /**
   * Offer the task tool: the model hands self-contained parts of the work to sub-agents with
   * fresh contexts (read-only explorers by default), several at once; their tokens count in
   * maxTokens, their traces are linked from the session's. true, or { maxConcurrent, maxSteps, tools, maxTokens }
   * (tools "read-only": children never write; maxTokens: each child's own budget).
   */
  subagents?:
    | boolean
    | { maxConcurrent?: number; maxSteps?: number; tools?: "read-only" | "all"; maxTokens?: number };
  /**
   * Models by role, of the same endpoint: planner (--plan's planning), executor (code work),
   * summarizer (memory's model summaries), subagent (the task tool's children), chat (a first
   * step that is plain chat), strong (after escalateAfter failed tool calls in a row, default 2).
   */
  models?: {
    planner?: string;
    executor?: string;
    summarizer?: string;
    subagent?: string;
    chat?: string;
    strong?: string;
    escalateAfter?: number;
  };
  /** Added to the project's instructions (AGENTS.md) for every run. */
  instructions?: string;
  /** Resume a saved session by id (session.id of an earlier one). */
  resume?: string;
  /** Keep the conversation in a session file, resumable later (default true). */
  save?: boolean;
  /** Sessions, traces, memory, audit log (default: HANDS_DATA_DIR, else ~/.local/share/hands). */
  dataDir?: string;
  /** Read ~/.config/hands/config.json and the workspace's .hands/ as the CLI does (default false). */
  configFiles?: boolean;
  /** The environment settings come from (default process.env: OPENAI_API_KEY, HANDS_MODEL…). */
  env?: NodeJS.ProcessEnv;
  /** Things worth knowing that are not errors (a sandbox that does not isolate, an MCP server that failed). */
  onNotice?: (text: string) => void;
}

export interface RunOptions {
  /** Aborting ends the run with status "aborted" (never a rejection). */
  signal?: AbortSignal;
  /** Every event of the run as it happens (the same events `hands --json` prints). */
  onEvent?: (event: AgentEvent) => void;
  /**
   * A JSON Schema for the answer: the model is told to answer with one JSON value, which is
   * parsed and validated. An answer that does not match is sent back with the errors, at most
   * `outputRetries` times; after that the run's status is "error" and `output` is unset.
   */
  outputSchema?: JsonSchema;
  /** How often a non-matching answer is sent back (default 2). */
  outputRetries?: number;
}

/** How the session is protected, in every result. */
export interface Safety {
  sandbox: SandboxKind;
  /** false only for sandbox "local": commands run as you. */
  isolated: boolean;
  commandPolicy: "builtin" | "none";
  approval: ApprovalMode;
}

export interface RunResult<T = unknown> {
  status: RunStatus;
  /** The final answer, as the model wrote it. */
  answer: string;
  /** The validated answer, with `outputSchema` (undefined when it never matched). */
  output?: T;
  reason?: string;
  steps: number;
  usage: Usage;
  durationMs: number;
  sessionId: string;
  safety: Safety;
}

/** A run in progress: its events as an async iterator, and its result. */
export interface RunStream<T = unknown> extends AsyncIterable<AgentEvent> {
  readonly result: Promise<RunResult<T>>;
}

export class Session {
  /** Use createSession. */
  constructor(private readonly core: HandsSession) {}

  /** The id to resume this session with (createSession({ resume: id })). */
  get id(): string {
    return this.core.id;
  }

  get safety(): Safety {
    return {
      sandbox: this.core.sandboxKind,
      isolated: this.core.isolated,
      commandPolicy: this.core.setup.commandPolicy ?? "builtin",
      approval: this.core.mode,
    };
  }

  /** The model in use. */
  get model(): string {
    return this.core.provider.model;
  }

  /** Runs a task to its end; later tasks continue the same conversation. */
  async run<T = unknown>(task: string, options: RunOptions = {}): Promise<RunResult<T>> {
    checkOptions(options, RUN_OPTIONS, "run option");
    if (typeof task !== "string" || !task.trim())
      throw new SettingsError("run(task): task must be a non-empty string");
    const output = options.outputSchema ? compileOutputSchema(options.outputSchema) : undefined;
    const retries = options.outputRetries ?? 2;
    if (!Number.isInteger(retries) || retries < 0)
      throw new SettingsError(`outputRetries must be a whole number ≥ 0, got ${JSON.stringify(retries)}`);
    const runOptions = {
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.onEvent ? { onEvent: options.onEvent } : {}),
    };
    if (!output) return this.result<T>(await this.core.run(task, runOptions));
    // Memory keeps the task once, with its final outcome: not the schema's instructions, and
    // not the retry prompts (they are no task of the user's, and not facts about the workspace).
    const attempts = { ...runOptions, learn: false as const };
    let result = await this.core.run(`${task}\n\n${outputInstructions(output.schema)}`, attempts);
    for (let attempt = 0; ; attempt++) {
      const parsed = result.status === "done" ? parseOutput(result.answer, output.validate) : undefined;
      if (!parsed || parsed.ok || attempt >= retries) {
        await this.core.learn(task, result);
        if (!parsed) return this.result<T>(result);
        if (parsed.ok) return { ...this.result<T>(result), output: parsed.value as T };
        return {
          ...this.result<T>(result),
          status: "error",
          reason: `the answer does not match the output schema after ${retries + 1} attempts: ${parsed.error}`,
        };
      }
      result = await this.core.run(
        `Your answer does not match the required JSON schema: ${parsed.error}\n\n${outputInstructions(output.schema)}`,
        attempts,
      );
    }
  }

  /** Runs a task, yielding its events as they happen; `result` resolves when it ends. */
  stream<T = unknown>(task: string, options: Omit<RunOptions, "onEvent"> = {}): RunStream<T> {
    checkOptions(
      options,
      RUN_OPTIONS.filter((k) => k !== "onEvent"),
      "stream option",
    );
    const queue: AgentEvent[] = [];
    let wake: (() => void) | undefined;
    let finished = false;
    const result = this.run<T>(task, {
      ...options,
      onEvent: (e) => {
        queue.push(e);
        wake?.();
      },
    }).finally(() => {
      finished = true;
      wake?.();
    });
    // A caller that only iterates still sees a failure (it rethrows from the iterator).
    result.catch(() => {});
    return {
      result,
      async *[Symbol.asyncIterator]() {
        for (;;) {
          while (queue.length) yield queue.shift()!;
          if (finished) break;
          await new Promise<void>((r) => {
            wake = r;
          });
          wake = undefined;
        }
        await result;
      },
    };
  }

  /** Stops MCP servers and sandboxes, saves memory and the session file. */
  close(): Promise<void> {
    return this.core.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private result<T>(r: Awaited<ReturnType<HandsSession["run"]>>): RunResult<T> {
    return {
      status: r.status,
      answer: r.answer,
      ...(r.reason ? { reason: r.reason } : {}),
      steps: r.steps,
      usage: r.usage,
      durationMs: r.durationMs,
      sessionId: this.core.id,
      safety: this.safety,
    };
  }
}

/** An MCP server: a program started over stdio, or a Streamable HTTP endpoint. */
export type McpServer =
  | ({ command: string; args?: string[]; env?: Record<string, string>; cwd?: string } & McpServerCommon)
  | ({ url: string; headers?: Record<string, string> } & McpServerCommon);

interface McpServerCommon {
  /** Leave this server out. */
  disabled?: boolean;
  /** How long one tool call may take (default 60000 ms). */
  timeoutMs?: number;
  /** How long it may take to start and list its tools (default 15000 ms). */
  startupTimeoutMs?: number;
  /** How often a stdio server that stops is restarted (default 3). */
  maxRestarts?: number;
}

const SESSION_OPTIONS = [
  "workspace",
  "provider",
  "model",
  "baseURL",
  "apiKey",
  "reasoning",
  "maxSteps",
  "maxTokens",
  "idleTimeout",
  "repoMap",
  "repoMapTokens",
  "sandbox",
  "network",
  "allowDomains",
  "databases",
  "approval",
  "approve",
  "commandPolicy",
  "memory",
  "mcpServers",
  "tools",
  "hooks",
  "subagents",
  "models",
  "instructions",
  "resume",
  "save",
  "dataDir",
  "configFiles",
  "env",
  "onNotice",
] as const satisfies readonly (keyof SessionOptions)[];
const RUN_OPTIONS = [
  "signal",
  "onEvent",
  "outputSchema",
  "outputRetries",
] as const satisfies readonly (keyof RunOptions)[];

/** Starts a session (or resumes one: `resume`). Unknown or misspelled options are errors. */
export async function createSession(options: SessionOptions = {}): Promise<Session> {
  checkOptions(options, SESSION_OPTIONS, "option");
  const env = options.env ?? process.env;
  const notice = options.onNotice ?? (() => {});
  const approve = options.approve;
  if (approve !== undefined && typeof approve !== "function")
    throw new SettingsError("approve must be a function (request) => boolean | { answer, reason }");
  if (options.commandPolicy !== undefined && !["builtin", "none"].includes(options.commandPolicy))
    throw new SettingsError(
      `commandPolicy must be "builtin" or "none", got ${JSON.stringify(options.commandPolicy)}`,
    );
  // As the CLI does at start: the data folder (sessions, traces, memory) is the user's alone.
  const data = options.dataDir ?? dataDir(env);
  try {
    const { skipped } = secureDataDir(data);
    if (skipped) notice(`warning: the data folder is not made private: ${skipped}`);
  } catch (err) {
    notice(`warning: cannot make the data folder private: ${(err as Error).message}`);
  }
  const tools = ownTools(options.tools);
  let hooks: ReturnType<typeof hooksFromFunctions> | undefined;
  if (options.hooks !== undefined) {
    checkOptions(options.hooks, ["preToolUse", "postToolUse", "sessionStart", "sessionEnd", "stop"], "hook");
    try {
      hooks = hooksFromFunctions(options.hooks);
    } catch (err) {
      throw new SettingsError((err as Error).message);
    }
  }
  const core = await openSession({
    workspace: options.workspace ?? process.cwd(),
    flags: sessionFlags(options, env),
    env,
    configFiles: options.configFiles ?? false,
    approvalDefault: approve ? "ask" : "auto",
    ...(approve ? { askUser: async (p: ApprovalPrompt) => userAnswer(await approve(p)) } : {}),
    report: (_level, text) => notice(text),
    save: options.save ?? true,
    ...(options.resume !== undefined ? { resume: options.resume } : {}),
    dataDir: data,
    ...(options.instructions ? { instructions: options.instructions } : {}),
    ...(options.commandPolicy ? { commandPolicy: options.commandPolicy } : {}),
    ...(tools.length ? { tools } : {}),
    ...(hooks ? { hooks } : {}),
    ...(options.subagents !== undefined ? { subagents: checkSubagents(options.subagents) } : {}),
  });
  return new Session(core);
}

/** The options as the composition root's settings (they win over the environment and config files). */
function sessionFlags(o: SessionOptions, env: NodeJS.ProcessEnv): SettingFlags {
  const memory = o.memory;
  if (memory !== undefined && typeof memory !== "boolean" && (typeof memory !== "object" || memory === null))
    throw new SettingsError("memory must be true, false or { contextBudget: N }");
  if (typeof memory === "object") checkOptions(memory, ["contextBudget"], "memory option");
  // The same table and words as the config files and the environment (settings-schema.ts).
  for (const key of SETTING_KEYS) {
    const name = (SETTINGS[key] as SettingSpec).sdk;
    const value = name === undefined ? undefined : (o as Record<string, unknown>)[name];
    // memory and subagents also take true/false here, and are checked by their own parsers.
    if (value !== undefined && key !== "memory" && key !== "subagents")
      checkSetting(key, value, name as string);
  }
  return {
    ...(o.provider ? { provider: o.provider } : {}),
    ...(o.model ? { model: o.model } : {}),
    ...(o.baseURL ? { baseUrl: o.baseURL } : {}),
    ...(o.apiKey ? { apiKey: o.apiKey } : {}),
    ...(o.reasoning ? { reasoning: o.reasoning } : {}),
    ...(o.maxSteps ? { maxSteps: o.maxSteps } : {}),
    ...(o.maxTokens ? { maxTokens: o.maxTokens } : {}),
    ...(o.idleTimeout ? { idleTimeout: o.idleTimeout } : {}),
    ...(o.repoMap ? { repoMap: o.repoMap } : {}),
    ...(o.repoMapTokens ? { repoMapTokens: o.repoMapTokens } : {}),
    // Unnamed: an isolating backend, unless the user's own config files (read on request) choose.
    ...(o.sandbox ? { sandbox: o.sandbox } : o.configFiles ? {} : { sandbox: isolatingSandbox(env) }),
    ...(o.network ? { network: o.network } : {}),
    ...(o.allowDomains ? { allowDomain: o.allowDomains } : {}),
    ...(o.databases ? { databases: o.databases } : {}),
    ...(o.approval ? { approval: o.approval } : {}),
    ...(memory === false ? { memory: false } : memory === true ? { memory: true } : {}),
    ...(typeof memory === "object" && memory.contextBudget !== undefined
      ? { contextBudget: memory.contextBudget }
      : {}),
    ...(o.mcpServers ? { mcpServers: o.mcpServers } : {}),
    ...(o.models ? { models: o.models } : {}),
  };
}

/** The sandbox when the caller named none: HANDS_SANDBOX, else bubblewrap, never "local" unasked. */
function isolatingSandbox(env: NodeJS.ProcessEnv): string {
  if (env.HANDS_SANDBOX) return env.HANDS_SANDBOX;
  const found = defaultSandboxKind();
  if (found.kind === "local")
    throw new SettingsError(
      `no isolating sandbox is available here (${found.warning?.replace(/^warning: /, "")}); pass sandbox: "docker", or sandbox: "local" to run commands unisolated`,
    );
  return found.kind;
}

function userAnswer(a: ApprovalAnswer): UserAnswer {
  if (a === true) return { answer: "yes" };
  if (a === false) return { answer: "no" };
  if (a && typeof a === "object" && ["yes", "no", "always"].includes(a.answer)) return a;
  return {
    answer: "no",
    reason: `the approval callback gave ${JSON.stringify(a)}, not true/false or { answer }`,
  };
}

/** The `tools` option as checked tools (a plain definition goes through defineTool here). */
function ownTools(given: unknown): Tool[] {
  if (given === undefined) return [];
  if (!Array.isArray(given)) throw new SettingsError("tools must be a list of defineTool(…) results");
  return given.map((t) => {
    if (isDefinedTool(t)) return t;
    try {
      return defineTool(t as ToolDefinition);
    } catch (err) {
      throw new SettingsError((err as Error).message);
    }
  });
}

function checkSubagents(value: unknown): boolean | Omit<SubagentConfig, "enabled"> {
  if (typeof value === "boolean") return value;
  if (typeof value !== "object" || value === null)
    throw new SettingsError("subagents must be true or { maxConcurrent, maxSteps, tools, maxTokens }");
  checkOptions(value, ["maxConcurrent", "maxSteps", "tools", "maxTokens"], "subagents option");
  return parseSubagentsConfig(value, "the subagents option");
}
